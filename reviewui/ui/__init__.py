"""The Textual layer of reviewui: the app, its screens and widgets."""
