"""The ways the tool is run: the command line, the language server, a run over many scripts."""
