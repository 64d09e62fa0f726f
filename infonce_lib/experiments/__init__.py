"""The book's experiments, one module each on a shared template (``run``, ``tables``,
``checks``, ``report``)."""
