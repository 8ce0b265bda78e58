# SPDX-License-Identifier: Apache-2.0
"""skiff benchmark harness: statistics, tool-output parsers and reporting.

Standard library only: the harness runs on the same minimal Debian test
machines as the testbed, where adding numpy/scipy is not worth it for a few
medians and rank tests.
"""
