# gifpack — see README.md. `make demo` and `make test` install missing Debian packages first.
SHELL := /bin/bash
PREFIX ?= /usr/local
SWIFT ?= swift
APT_PACKAGES := libcurl4-openssl-dev libarchive-dev libgif-dev libzstd-dev zstd tar curl jq pkg-config
BENCH_PACKAGES := time python3
RELEASE_BIN = $(shell $(SWIFT) build -c release --show-bin-path 2>/dev/null)
DEMO_DIR := .demo

.PHONY: deps build test demo install bench clean

deps:
	@missing=""; for p in $(APT_PACKAGES) $(EXTRA_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" -eq 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: deps
	$(SWIFT) build -c release --product gifpack
	$(SWIFT) build -c release --product exercisedb-fixture

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

demo: build
	@rm -rf $(DEMO_DIR); mkdir -p $(DEMO_DIR)
	@bin="$(RELEASE_BIN)"; \
	"$$bin/exercisedb-fixture" --port 0 --realistic --count 60 --port-file $(DEMO_DIR)/port --api-key demo-key > $(DEMO_DIR)/fixture.log 2>&1 & \
	server=$$!; trap 'kill $$server 2>/dev/null; wait $$server 2>/dev/null' EXIT; \
	for i in $$(seq 100); do [ -s $(DEMO_DIR)/port ] && break; sleep 0.1; done; \
	port=$$(cat $(DEMO_DIR)/port); echo "fixture server on port $$port"; \
	DEMO_EXERCISEDB_KEY=demo-key SOURCE_DATE_EPOCH=1700000000 "$$bin/gifpack" build --manifest manifests/demo.yaml \
	  --base-url http://127.0.0.1:$$port --out $(DEMO_DIR)/dist --cache $(DEMO_DIR)/cache; status=$$?; \
	[ $$status -eq 0 ] || [ $$status -eq 3 ] || exit $$status; \
	echo; echo "== index"; jq '{formatVersion, generator, packs: [.packs[] | {name, version, file, bytes, entryCount}]}' $(DEMO_DIR)/dist/index.json; \
	for pack in $(DEMO_DIR)/dist/packs/*.tar.zst; do \
	  echo "== zstd -t $$pack"; zstd -q -t "$$pack" && echo "frames ok"; \
	  echo "== tar --zstd -tvf $$pack (first entries)"; tar --zstd -tvf "$$pack" | head -5; \
	  echo "== gifpack verify $$pack"; "$$bin/gifpack" verify "$$pack"; \
	done

# Benchmarks (README.md, "Benchmarks"): prints a table, writes bench/results.json. BENCH_QUICK=1 for a
# quick pass; BENCH_ARGS passes flags, e.g. BENCH_ARGS="--count 500 --latency-ms 50 --real-data DIR".
bench: build
	@$(MAKE) --no-print-directory deps EXTRA_PACKAGES="$(BENCH_PACKAGES)"
	bench/run.sh --bin "$(RELEASE_BIN)" $(BENCH_ARGS)

install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 "$(RELEASE_BIN)/gifpack" $(DESTDIR)$(PREFIX)/bin/gifpack

clean:
	rm -rf .build $(DEMO_DIR) dist
