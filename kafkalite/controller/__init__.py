"""The controller: the metadata state machine and the quorum log it is written to."""
