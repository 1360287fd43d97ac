#!/usr/bin/env python3
"""Run the validator from a checkout: same program as the `validate-scripts` command."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from verl_preflight.app.start import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
