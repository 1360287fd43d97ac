"""What every layer shares: values and findings, the bounded reader, the sources read, repositories."""
