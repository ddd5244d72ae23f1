"""The conversation pane: a conversation's transcript as a virtualised list, its header, the
composer, and the notice that says what the pane is waiting for."""
