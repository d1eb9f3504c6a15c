"""TensorFlow graph passes and conversions: island coarsening, break-up and graph pruning on
tf_executor graphs, tf functions to executor form, and tfg <-> tf_executor with the feeds and
fetches named by TensorFlow's own flags (``tf_io_options``). May import ``egraft.ir``,
``egraft.rewrite`` and ``passes.manager``.
"""
