"""State to HTML or Markdown: templates, Markdown, diffs, highlighting, terminal output, the export. No Starlette."""
