"""Private compiled helpers that serve speed only: register loads and stores, packed symmetric 6x6
matrices, borrowed views, the step workspace layout."""
