"""``workbench``: the command line, one module per command group; :mod:`.main` builds the
parser."""
