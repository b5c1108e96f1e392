"""`python -m arbiter_client [HOST:PORT]`: every RPC of the contract against the server there
(localhost:50051 by default), each answer checked; exits non-zero on a wrong one."""

from .client import run

run()
