"""Tests of the tf-grappler pass and its families (issue #12)."""
