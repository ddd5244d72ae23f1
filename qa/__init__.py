"""The multi-device convergence harness (`converge qa`): the one package that uses both the
client (`sync`) and the server (`server_stub`, as a child process), beside `bench/`."""
