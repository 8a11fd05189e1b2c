//! convoy-tests: fixtures that start real `convoy` server processes and talk to them.
