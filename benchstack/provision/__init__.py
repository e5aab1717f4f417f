"""Step 2, the hosts: which roles may be skipped (markers: the provisioning markers and drift; the host's
record in hostrecord, the command that reads a host in hostcommand), what no stack of the plan owns (sweep:
stale units and files), what the roles made as it is on a host (hoststate, run there), host tuning, local
containers (localdocker), name resolution (dns)."""
