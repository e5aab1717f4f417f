# Shortcuts for ./run, which does the work (and needs nothing but bash and python3 on a fresh host).
.PHONY: bench test setup lint unit integration molecule e2e
bench:
	./run bench $(EXPERIMENT)
test:
	./run test
setup lint unit integration e2e:
	./run $@
molecule:
	./run molecule $(SCENARIO)
