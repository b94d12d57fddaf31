/*-------------------------------------------------------------------------
 *
 * wal_record.c
 *	  Fuzz target: the bytes of snowflake's WAL record (src/walrecord.c:
 *	  snowflake_wal_decode, which replay reads every record with, and
 *	  snowflake_wal_encode, which writes them).
 *
 * The input: an info code, then the record's bytes; then the same bytes
 * are read again as the values of a record to write.  The target knows the
 * format from its documentation (walrecord.h: a header of two 16-bit
 * fields, format and the release it needs, then each kind's fields), not
 * from the code under test.  Properties:
 *	- any bytes: shorter than the header, or than its kind's fields, are
 *	  corrupt; a record that needs a later release than 1.3 (103) is
 *	  refused as such, whatever follows; a kind 1.3 does not know is
 *	  skipped; else read, and bytes after the kind's fields change nothing;
 *	- a request's kind is one of the three known, a kind it does not know
 *	  read as a restore's (1);
 *	- any record written reads back as itself, with the info code of its
 *	  kind (kind << 4), in at most SNOWFLAKE_WAL_MAX_SIZE bytes.
 *
 * Test only: never part of the extension.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "walrecord.h"

#include "fuzz.h"

/* Each kind's fields after the header, as documented. */
static size_t
documented_size(int kind)
{
	switch (kind)
	{
		case 1:
			return 16;			/* lead, horizon */
		case 2:
			return 16;			/* request id, kind, unused */
		case 3:
			return 16;			/* request id, node base, node span */
	}
	return 0;
}

static void
check_bytes(uint8 info, const uint8 *data, size_t size)
{
	SfRecord	rec;
	SfRecord	again;
	SfWalHeader hdr;
	SfWalHeader hdr2;
	SfWalDecode got;
	int			kind = (info & 0xF0) >> 4;
	uint16		needs = 0;
	uint8	   *copy = malloc(size + 1);

	memcpy(copy, data, size);
	got = snowflake_wal_decode(info, (const char *) copy, size, &rec, &hdr);
	if (size >= 4)
		memcpy(&needs, data + 2, 2);
	if (size < 4)
		FUZZ_CHECK(got == SF_WAL_CORRUPT, "%zu bytes: not refused as corrupt", size);
	else if (needs > 103)
		FUZZ_CHECK(got == SF_WAL_NEEDS_LATER && hdr.needs == needs,
				   "a record needing release %u not refused as such", needs);
	else if (kind < 1 || kind > 3)
		FUZZ_CHECK(got == SF_WAL_SKIP, "kind %d not skipped", kind);
	else if (size - 4 < documented_size(kind))
		FUZZ_CHECK(got == SF_WAL_CORRUPT, "kind %d in %zu bytes not corrupt",
				   kind, size);
	else
	{
		FUZZ_CHECK(got == SF_WAL_OK && (int) rec.kind == kind,
				   "kind %d in %zu bytes not read", kind, size);
		if (kind == 2)
			FUZZ_CHECK(rec.request_kind >= 1 && rec.request_kind <= 3,
					   "request kind %d", (int) rec.request_kind);
		/* Trailing bytes change nothing. */
		FUZZ_CHECK(snowflake_wal_decode(info, (const char *) copy,
										4 + documented_size(kind), &again,
										&hdr2) == SF_WAL_OK &&
				   memcmp(&rec, &again, sizeof(rec)) == 0,
				   "bytes after the fields of kind %d changed the record", kind);
	}
	free(copy);
}

static void
check_written(const uint8 *data, size_t size)
{
	SfRecord	rec;
	SfRecord	back;
	SfWalHeader hdr;
	char		buf[SNOWFLAKE_WAL_MAX_SIZE];
	uint8		info;
	size_t		len;

	memset(&rec, 0, sizeof(rec));
	rec.kind = (SfRecordKind) (1 + fuzz_take(&data, &size, 1) % 3);
	switch (rec.kind)
	{
		case SF_RECORD_LEADS:
			rec.leads.lead_ms = (int64) fuzz_take(&data, &size, 8);
			rec.leads.horizon_unix_ms = (int64) fuzz_take(&data, &size, 8);
			break;
		case SF_RECORD_REQUEST:
			rec.request_id = fuzz_take(&data, &size, 8);
			rec.request_kind = (SfRequestKind) (1 + fuzz_take(&data, &size, 1) % 3);
			break;
		case SF_RECORD_CONFIRM:
			rec.request_id = fuzz_take(&data, &size, 8);
			rec.node_base = (int32) fuzz_take(&data, &size, 4);
			rec.node_span = (int32) fuzz_take(&data, &size, 4);
			break;
	}
	len = snowflake_wal_encode(&rec, buf, &info);
	FUZZ_CHECK(len <= SNOWFLAKE_WAL_MAX_SIZE && info == (uint8) (rec.kind << 4),
			   "kind %d written in %zu bytes, info %u", (int) rec.kind, len, info);
	FUZZ_CHECK(snowflake_wal_decode(info, buf, len, &back, &hdr) == SF_WAL_OK &&
			   memcmp(&rec, &back, sizeof(rec)) == 0,
			   "a record of kind %d does not read back as itself", (int) rec.kind);
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	uint8		info;

	if (size < 1)
		return 0;
	info = data[0] & 0xF0;
	check_bytes(info, data + 1, size - 1);
	check_written(data + 1, size - 1);
	return 0;
}
