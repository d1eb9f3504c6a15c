"""Test-wide settings.

Hypothesis explores new examples on every local run; under CI (CI=true) it
is derandomized so that a submission's result does not depend on luck."""

import os

# TensorFlow's kernels are the reference the differential tests compare with, so every test
# process gets the same ones: TF turns oneDNN on by default on CPUs with AVX-512 (this machine's
# EPYC: on; the previous CI machine: off), and oneDNN's Softmax returns NaN for a row holding
# +inf, and its Conv2D sizes a window that does not fit differently. Tests that need oneDNN
# (fused _Mkl* kernels, the remapper's kernel table) start a child process with it set.
os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"

from hypothesis import Phase, settings

# No shrinking under CI: a failure still fails the run, reported with the
# example as found, instead of spending many minutes minimizing it.
settings.register_profile("ci", derandomize=True, print_blob=True,
                          phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target])
if os.environ.get("CI"):
    settings.load_profile("ci")
