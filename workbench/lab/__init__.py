"""The analyst's side: samples of a topic, previews and replays through the production plan,
parity of result rows, the notebooks we ship and the Jupyter kernel."""
