# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# udpdrop build. Everything but the final ./udpdrop goes to .output/.
#   make            build ./udpdrop
#   make static     build ./udpdrop-static: no shared libraries, copy it anywhere
#   make check      unit tests, BPF integration tests (root), sanitizer build
#                   (installs nothing: `make deps` first on a fresh machine)
#   make check-kernels  the core integration tests on Debian's kernels under
#                   QEMU (root; KERNELS="bullseye bookworm trixie sid")
#   make deps       install the Debian packages the build and tests need
#   make demo       deps + build + udpdrop demo: real drops in throwaway namespaces
#   make bench      per-drop BPF cost and storm rate, side by side
#   make soak       top and record for SOAK_SECS (600) under socket and netns churn
#   make install    PREFIX=/usr/local DESTDIR=
#   make man        write each man/udpdrop-CMD.8's OPTIONS from its option table
#   make check-man  fail when a committed page's OPTIONS differ from the table
#   V=1             show full commands

VERSION     := 0.1.0
OUTPUT      ?= .output
CLANG       ?= clang
BPFTOOL     ?= bpftool
CC          ?= cc
PKG_CONFIG  ?= pkg-config
PREFIX      ?= /usr/local
ARCH        := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
VMLINUX_DIR := vmlinux/$(shell uname -m)

# CFLAGS/LDFLAGS are the user's (and the asan target's); the rest is ours.
CFLAGS      ?= -g -O2
ALL_CFLAGS  := $(CFLAGS) -Wall -Wextra -Wno-unused-parameter \
               -Wno-missing-field-initializers -std=gnu11 -D_GNU_SOURCE \
               -DUDPDROP_VERSION='"$(VERSION)"'
# src/ is layered (tools/check-layers.sh, HACKING.md): headers are found by
# name in every layer's folder; the check keeps includes pointing down.
LAYERS      := base trace kernel model advice loadgen cmd
SRC_DIRS    := $(LAYERS) $(patsubst src/%/,%,$(sort $(dir $(wildcard src/cmd/*/*.c))))
INCLUDES    := -Iinclude $(addprefix -Isrc/,$(SRC_DIRS)) -I$(OUTPUT)
# the trace's blocks: LZ4 (and zlib, which also gives every CRC-32)
TRACE_LIBS  := -llz4 -lz
LIBS        := -pthread -lbpf -lelf $(TRACE_LIBS) $(shell $(PKG_CONFIG) --libs ncursesw 2>/dev/null || echo -lncursesw -ltinfo) -lm
BPF_CFLAGS  := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
               -Wno-unused-function -Wno-compare-distinct-pointer-types \
               -I$(VMLINUX_DIR) -Iinclude -Ibpf

ifeq ($(V),1)
  Q =
  msg =
else
  Q = @
  msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# libudpdrop.a: every layer below the commands. The commands (src/cmd/)
# link onto it; CORE_OBJS is both, all but main (the unit tests link them).
LIB_SRCS    := $(foreach l,$(filter-out cmd,$(LAYERS)),$(wildcard src/$(l)/*.c))
LIB_OBJS    := $(patsubst src/%.c,$(OUTPUT)/obj/%.o,$(LIB_SRCS))
LIB         := $(OUTPUT)/libudpdrop.a
CMD_SRCS    := $(filter-out src/cmd/main.c,$(wildcard src/cmd/*.c src/cmd/*/*.c))
CMD_OBJS    := $(patsubst src/%.c,$(OUTPUT)/obj/%.o,$(CMD_SRCS))
CORE_OBJS   := $(CMD_OBJS) $(LIB)
MAIN_OBJ    := $(OUTPUT)/obj/cmd/main.o
BPF_SRCS    := $(wildcard bpf/*.bpf.c)
SKELS       := $(patsubst bpf/%.bpf.c,$(OUTPUT)/%.skel.h,$(BPF_SRCS))
# tests/unit mirrors src/: a module's tests in its layer's folder
UNIT_SRCS   := $(wildcard tests/unit/*/test_*.c tests/unit/cmd/*/test_*.c)
UNIT_BINS   := $(addprefix $(OUTPUT)/tests/,$(basename $(notdir $(UNIT_SRCS))))
vpath test_%.c $(sort $(dir $(UNIT_SRCS)))
HELPER_BIN  := $(OUTPUT)/tests/udptest
TRACECAT_BIN := $(OUTPUT)/tests/tracecat
SHOWIDS_BIN := $(OUTPUT)/tests/showids
FLOOR_BIN   := $(OUTPUT)/bench-floor

.PHONY: all static clean check check-layers check-kernels unit integration asan deps demo bench bench-bundle soak install uninstall vmlinux man check-man
.DELETE_ON_ERROR:
.SECONDARY:

all: udpdrop

$(OUTPUT) $(OUTPUT)/tests:
	$(Q)mkdir -p $@

# BPF: compile, link (bpftool gen object), then the skeleton header.
$(OUTPUT)/%.tmp.bpf.o: bpf/%.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(BPF_DEFS) -MMD -MP -MT $@ -c $< -o $@

# udpdrop.bpf.c is built twice: udpdrop.bpf.o reads packet headers with
# kfuncs (bpf_rdonly_cast: kernels 6.2+), udpdrop_compat.bpf.o with probe
# reads. The loader (src/kernel/tracer_object.c) takes one or the other
# through the one skeleton, so both must lay out maps, programs and
# globals alike: udpdrop_compat.layout fails the build where they differ.
# Two objects, not one with the kfunc call left out by the verifier: with
# libbpf 1.1 an unresolved call stays a call #0, which 5.13-5.17 refuse.
$(OUTPUT)/udpdrop.tmp.bpf.o: BPF_DEFS := -DUD_KFUNCS=1
$(OUTPUT)/udpdrop_compat.tmp.bpf.o: bpf/udpdrop.bpf.c | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DUD_KFUNCS=0 -MMD -MP -MT $@ -c $< -o $@

$(OUTPUT)/udpdrop_compat.layout: $(OUTPUT)/udpdrop.skel.h $(OUTPUT)/udpdrop_compat.skel.h
	$(call msg,CHECK,$@)
	$(Q)sed '/__elf_bytes(size_t \*sz)$$/,/^}/d' $(OUTPUT)/udpdrop.skel.h >$@.main
	$(Q)sed -e '/__elf_bytes(size_t \*sz)$$/,/^}/d' -e 's/udpdrop_compat_bpf/udpdrop_bpf/g' \
		-e 's/UDPDROP_COMPAT_BPF/UDPDROP_BPF/g' $(OUTPUT)/udpdrop_compat.skel.h >$@.compat
	$(Q)cmp -s $@.main $@.compat || { diff $@.main $@.compat | head -20; \
		echo "udpdrop.bpf.o and udpdrop_compat.bpf.o differ in layout (above)" >&2; exit 1; }
	$(Q)rm -f $@.main $@.compat
	$(Q)touch $@

$(OUTPUT)/%.bpf.o: $(OUTPUT)/%.tmp.bpf.o
	$(call msg,GEN-OBJ,$@)
	$(Q)$(BPFTOOL) gen object $@ $<

$(OUTPUT)/%.skel.h: $(OUTPUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $*_bpf > $@

# User space. -MMD tracks headers once an object exists; the skeleton a
# file includes must exist before its first compile, so that one is named.
$(OUTPUT)/obj/%.o: src/%.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(INCLUDES) -MMD -MP -c $< -o $@

$(OUTPUT)/obj/kernel/tracer.o: $(OUTPUT)/udpdrop.skel.h
$(OUTPUT)/obj/kernel/tracer_read.o: $(OUTPUT)/udpdrop.skel.h
$(OUTPUT)/obj/kernel/tracer_retire.o: $(OUTPUT)/udpdrop.skel.h
$(OUTPUT)/obj/kernel/tracer_events.o: $(OUTPUT)/udpdrop.skel.h
$(OUTPUT)/obj/kernel/tracer_object.o: $(OUTPUT)/udpdrop.skel.h $(OUTPUT)/udpdrop_compat.layout
$(OUTPUT)/obj/loadgen/xdpstamp.o: $(OUTPUT)/xdpstamp.skel.h

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

udpdrop: $(MAIN_OBJ) $(CORE_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LIBS) -o $@

# One file that needs no shared library on the target: libbpf, libelf,
# liblz4, zlib, ncursesw and glibc linked in (Debian ships every one as a .a), as
# static-pie so that it still loads at a random address. The same objects
# as ./udpdrop but main.o, which limits glibc's NSS to its built-in
# services (src/cmd/main.c says why): the linker's "Using 'getaddrinfo' in
# statically linked applications..." warnings are about the modules it
# never loads. pkg-config --static names what libelf needs (libzstd where
# it was built with it).
STATIC_BIN  := udpdrop-static
STATIC_LIBS := $(shell $(PKG_CONFIG) --static --libs libbpf liblz4 ncursesw 2>/dev/null || \
		 echo -lbpf -lelf -llz4 -lz -lncursesw -ltinfo) -lm -pthread

static: $(STATIC_BIN)

$(OUTPUT)/static:
	$(Q)mkdir -p $@

$(OUTPUT)/static/main.o: src/cmd/main.c | $(OUTPUT)/static
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -DUDPDROP_STATIC $(INCLUDES) -MMD -MP -c $< -o $@

$(STATIC_BIN): $(OUTPUT)/static/main.o $(CORE_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -static-pie $^ $(STATIC_LIBS) -o $@

# Unit tests: cmocka, no root, linked against the core library.
$(OUTPUT)/tests/test_%: test_%.c $(CORE_OBJS) | $(OUTPUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(INCLUDES) -Itests/unit -MMD -MP $< $(CORE_OBJS) $(LIBS) -lcmocka -o $@

$(HELPER_BIN): tests/integration/udptest.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(INCLUDES) -MMD -MP $< -o $@

# The static-binary tests' command for record: static too (an empty root).
$(SHOWIDS_BIN): tests/integration/showids.c | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -static $< -o $@

# The integration tests' trace reader: records as JSON lines.
TRACE_SRCS  := src/trace/trace.c src/trace/trace_blocks.c
$(TRACECAT_BIN): tests/integration/tracecat.c $(TRACE_SRCS) src/base/util.c src/trace/trace.h src/trace/trace_internal.h src/base/util.h include/udpdrop.h | $(OUTPUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(INCLUDES) $(LDFLAGS) tests/integration/tracecat.c $(TRACE_SRCS) src/base/util.c $(TRACE_LIBS) -pthread -o $@

# The benchmark's floor: an empty tp_btf program on the same tracepoint.
$(FLOOR_BIN): tools/bench/floor.c $(OUTPUT)/bench_floor.skel.h | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(INCLUDES) -MMD -MP $< $(LIBS) -o $@

# The generator benchmark's stopwatch: inter-arrival gaps at XDP.
$(OUTPUT)/bench-gaps: tools/bench/gaps.c src/base/hist.c $(OUTPUT)/bench_gaps.skel.h | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(INCLUDES) -MMD -MP tools/bench/gaps.c src/base/hist.c $(LIBS) -o $@

# top's own CPU use: 10,000 sockets held, 1,000 of them made to drop.
$(OUTPUT)/bench-sockets: tools/bench/sockets.c | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP $< -o $@

unit: $(UNIT_BINS)
	$(Q)tools/run-unit.sh $(UNIT_BINS)

integration: udpdrop $(STATIC_BIN) $(HELPER_BIN) $(TRACECAT_BIN) $(SHOWIDS_BIN)
	$(Q)tests/integration/run.sh

# Sanitizer build of the user-space code in its own output tree; runs the
# unit tests, a short live `top --batch`, and the integration tests that
# drive the most user-space paths (flow attribution, closed sockets,
# fragments, the old-kernel path) against the sanitized binary.
ASAN_INTEGRATION := rcvbuf_tracepoint_no_rx_sk restart_same_port socket_close \
		    frag_timeout checksum two_sockets filters tui \
		    gen_sink_clean gen_sink_ipv6_no_control demo_rcvbuf \
		    churn_keeps_attribution close_unseen_socket_record \
		    netns_gone_top caps_top record_output_targets \
		    doctor_hostile_names stdout_write_errors
asan:
	$(Q)$(MAKE) --no-print-directory OUTPUT=.output/asan \
		CFLAGS='-g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all' \
		LDFLAGS='-fsanitize=address,undefined' unit
	$(Q)$(MAKE) --no-print-directory OUTPUT=.output/asan \
		CFLAGS='-g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all' \
		LDFLAGS='-fsanitize=address,undefined' .output/asan/udpdrop-asan
	$(Q)tools/asan-live.sh .output/asan/udpdrop-asan
	$(Q)UDPDROP=.output/asan/udpdrop-asan tests/integration/run.sh $(ASAN_INTEGRATION)

$(OUTPUT)/udpdrop-asan: $(MAIN_OBJ) $(CORE_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LIBS) -o $@

check:
	$(Q)$(MAKE) --no-print-directory all $(STATIC_BIN) $(UNIT_BINS) $(HELPER_BIN) $(TRACECAT_BIN) $(SHOWIDS_BIN)
	$(Q)tools/man-options.sh --check
	$(Q)tools/check-layers.sh
	$(Q)tools/check-deploy.sh
	$(Q)tools/check.sh

# The man pages' OPTIONS sections come from the option tables (src/base/opts.h),
# through the hidden `udpdrop --man-options CMD`: `udpdrop CMD --help` and
# `man udpdrop-CMD` cannot disagree.
man: udpdrop
	$(Q)tools/man-options.sh ./udpdrop

check-layers:
	$(Q)tools/check-layers.sh

check-man: udpdrop
	$(Q)tools/man-options.sh --check ./udpdrop

# The kernel matrix: each kernel boots under QEMU (TCG) and runs the core
# integration tests; one table kernel x check (docs/kernels.md).
KERNELS ?= bullseye bookworm trixie sid
check-kernels:
	$(Q)$(MAKE) --no-print-directory udpdrop $(STATIC_BIN) $(HELPER_BIN) $(TRACECAT_BIN)
	$(Q)tests/kernels/matrix.sh $(KERNELS)

deps:
	$(Q)tools/deps.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)./udpdrop demo

bench: udpdrop $(HELPER_BIN) $(FLOOR_BIN) $(OUTPUT)/bench-sockets $(OUTPUT)/bench-gaps $(OUTPUT)/tests/tracecat
	$(Q)tools/bench.sh
	$(Q)tools/bench-top.sh
	$(Q)tools/bench-gen.sh

# The benchmark as one folder (.devbench/) for a machine without the tools.
bench-bundle:
	$(Q)tools/bench-bundle.sh

# Long: not part of check. RSS, CPU and table fill over time; fails on
# growth and past the targets: short-lived clients (200 sockets/s), then
# one port bound again and again with netns churn.
SOAK_SECS ?= 600
soak: udpdrop
	$(Q)SOAK_MODE=clients tools/soak.sh $(SOAK_SECS)
	$(Q)SOAK_MODE=port tools/soak.sh $(SOAK_SECS)

vmlinux:
	$(Q)tools/gen-vmlinux.sh

MAN_PAGES   := $(wildcard man/*.8)

install: udpdrop
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0755 udpdrop $(DESTDIR)$(PREFIX)/sbin/udpdrop
	install -m 0644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man8/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/sbin/udpdrop $(addprefix $(DESTDIR)$(PREFIX)/share/man/man8/,$(notdir $(MAN_PAGES)))

clean:
	$(call msg,CLEAN,)
	$(Q)rm -rf $(OUTPUT) udpdrop $(STATIC_BIN)

# Fuzzing the trace reader (tests/fuzz/fuzz_trace.c) on tests/fuzz/corpus:
# libFuzzer when $(CLANG) has it; otherwise the target's own standalone
# driver (blind mutations, same arguments) under $(CC)'s ASan/UBSan, so the
# corpus and the mutations still run sanitized. New inputs libFuzzer finds go
# to $(OUTPUT)/fuzz/corpus, never into the committed seeds.
#   make fuzz [FUZZ_SECS=60]    make fuzz-smoke (10 s)
FUZZ_SECS   ?= 60
FUZZ_BIN    := $(OUTPUT)/fuzz/fuzz_trace
# The offline side: report's model and everything it needs, and not one
# file of the live system (src/kernel/ but the pure mib.c and sockid.c):
# the target links these alone, so an offline file that reaches for the
# live system fails this link.
FUZZ_OFFLINE := src/cmd/report/report_load.c src/cmd/report/report_rows.c \
		src/cmd/report/report_timeline.c src/cmd/report/report_format.c \
		src/cmd/report/report_text.c src/cmd/report/report_advice.c \
		src/cmd/report/report_json.c $(TRACE_SRCS) src/base/util.c \
		src/base/json.c src/base/units.c src/base/htab.c src/model/causes.c src/model/rows.c \
		src/model/windows.c src/model/reconcile.c src/advice/advice.c \
		src/advice/advice_text.c src/advice/advice_rcvbuf.c \
		src/advice/advice_rules.c src/kernel/mib.c src/kernel/sockid.c \
		src/cmd/json_vocab.c
FUZZ_SRCS   := tests/fuzz/fuzz_trace.c $(FUZZ_OFFLINE)
FUZZ_CFLAGS := -g -O1 -fno-omit-frame-pointer -std=gnu11 -D_GNU_SOURCE \
	       -Wall -Wextra -Wno-unused-parameter $(INCLUDES)

.PHONY: fuzz fuzz-smoke

$(FUZZ_BIN): $(FUZZ_SRCS) $(wildcard src/*/*.h src/cmd/*/*.h) include/udpdrop.h
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D) $(OUTPUT)/fuzz/corpus
	$(Q)if printf 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }\n' | \
	     $(CLANG) -x c -fsanitize=fuzzer,address,undefined - -o $@.probe >/dev/null 2>&1; then \
		rm -f $@.probe; \
		$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined \
			$(FUZZ_SRCS) $(TRACE_LIBS) -pthread -o $@; \
	else \
		rm -f $@.probe; \
		echo "  (no libFuzzer in $(CLANG): standalone driver, $(CC) -fsanitize=address,undefined)"; \
		$(CC) $(FUZZ_CFLAGS) -DFUZZ_STANDALONE -fsanitize=address,undefined \
			-fno-sanitize-recover=all $(FUZZ_SRCS) $(TRACE_LIBS) -pthread -o $@; \
	fi

fuzz: $(FUZZ_BIN)
	$(Q)$(FUZZ_BIN) -max_total_time=$(FUZZ_SECS) $(OUTPUT)/fuzz/corpus tests/fuzz/corpus

fuzz-smoke: $(FUZZ_BIN)
	$(Q)$(FUZZ_BIN) -max_total_time=10 $(OUTPUT)/fuzz/corpus tests/fuzz/corpus

-include $(wildcard $(OUTPUT)/*.d $(OUTPUT)/obj/*/*.d $(OUTPUT)/obj/cmd/*/*.d $(OUTPUT)/tests/*.d $(OUTPUT)/static/*.d)
