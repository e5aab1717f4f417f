"""Step 2, the hosts: which roles each host runs and which may be skipped (roles: provisioning
markers, drift, stale units), what the roles made as it is on a host (hoststate, run there), host
tuning, the loopback CPU split, local containers (localdocker), name resolution (dns)."""
