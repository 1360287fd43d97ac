"""One script through the pipeline: its profiles, its launches, their findings, fixes and suppressions."""
