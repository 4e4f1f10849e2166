"""Several instances on one PostgreSQL behind one proxy: which runs each session (`instance`), and how a request for a
session another instance runs gets there (`forwarding`). One instance with SQLite uses none of this."""
