# Makefile for the snowflake extension (PGXS)

EXTENSION = snowflake
EXTVERSION = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(EXTENSION).control)

MODULE_big = snowflake
OBJS = src/snowflake.o src/functions.o src/worker.o src/generator.o src/reservation.o src/walrecord.o src/replay.o src/standbys.o src/history.o src/shared.o src/startcheck.o src/statefile.o src/config.o src/nodesource.o src/nodeparse.o src/layout.o src/textfunctions.o src/textform.o src/fileformat.o \
	src/publicid.o src/keyring.o src/keyfile.o src/ff1.o
# The scripts: snowflake--1.0.sql (released, frozen) and one update script
# per later version, snowflake--A--B.sql, and no install script of a later
# version: CREATE EXTENSION chains 1.0 and the updates, so each SQL object is
# written once.  snowflake--1.0--1.1.sql says how to add a version.
DATA = $(wildcard $(EXTENSION)--*.sql)
PG_CPPFLAGS = -DSNOWFLAKE_VERSION=\"$(EXTVERSION)\"
# Public IDs encrypt with AES from OpenSSL's libcrypto, the library
# PostgreSQL itself links for SSL and pgcrypto (src/ff1.c): its headers come
# with libssl-dev, which Debian's libpq-dev, and so postgresql-server-dev-NN,
# depends on.
SHLIB_LINK += -lcrypto
PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers $(if $(WERROR),-Werror)
# ASSERTS=1 enables the extension's Assert()s even against a server built
# without --enable-cassert (test/check.sh builds this way).
ifdef ASSERTS
PG_CPPFLAGS += -DUSE_ASSERT_CHECKING
endif

# pg_regress: an ordered list, the first creates the extension.  Each run
# starts its own server with the library preloaded (test/snowflake.conf).
REGRESS = setup layout decode decode_differential foreign generate lastval errors convert fleet textform ff1 publicid
REGRESS_OPTS = --temp-instance=$(CURDIR)/tmp_check_regress \
	--temp-config=$(srcdir)/test/snowflake.conf --inputdir=$(srcdir)

# Isolation specs live in test/specs with their output in test/expected.
ISOLATION = concurrent decode_recheck
ISOLATION_OPTS = --temp-instance=$(CURDIR)/tmp_check_isolation \
	--temp-config=$(srcdir)/test/snowflake.conf --inputdir=$(srcdir)/test

# TAP tests (PostgreSQL::Test::Cluster) in test/t.
TAP_TESTS = 1
PROVE_TESTS ?= test/t/*.pl

EXTRA_CLEAN = .build-flags tmp_check tmp_check_regress tmp_check_isolation results output_iso regression.diffs regression.out \
	sql-edition/build

# The directory of this Makefile, known without PGXS (which sets srcdir):
# `make sql-edition` needs only Perl.
SNOWFLAKE_SRCDIR := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The TAP tests share test/t/SnowflakeTest.pm.
PG_PROVE_FLAGS += -I $(srcdir)/test/t

# Rebuild every object when WERROR or ASSERTS change: otherwise objects of
# an assertion build could be linked into a production one.
SNOWFLAKE_BUILD_FLAGS := werror=$(WERROR) asserts=$(ASSERTS)
ifneq ($(SNOWFLAKE_BUILD_FLAGS),$(shell cat .build-flags 2>/dev/null))
$(shell echo '$(SNOWFLAKE_BUILD_FLAGS)' > .build-flags)
endif
$(OBJS) $(OBJS:.o=.bc): .build-flags

# PGXS does not track header dependencies: every object depends on them all.
$(OBJS) $(OBJS:.o=.bc): $(wildcard $(srcdir)/src/*.h)

# The CloudNativePG extension image (image/Containerfile), built with
# buildah as root: docs/deployment/cloudnativepg.md.
.PHONY: image
image:
	PG_CONFIG=$(PG_CONFIG) bash $(srcdir)/image/build.sh

# The SQL edition (sql-edition/): its files for a plain psql run, pg_tle
# and database.dev, generated from its one source into sql-edition/dist,
# where they are committed (docs/deployment/sql-edition.md); test/check.sh
# fails when they differ from what the sources build.  SQL_EDITION_FLAGS:
# build.pl's options, such as --layout 41/7/5 --epoch '2020-01-01 00:00:00'
# (an edition for another layout, into sql-edition/build).
.PHONY: sql-edition
sql-edition:
	perl $(SNOWFLAKE_SRCDIR)/sql-edition/build.pl $(SQL_EDITION_FLAGS)
