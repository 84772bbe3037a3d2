"""One checker per file kind (Python, notebook, project files) over one shared shell."""
