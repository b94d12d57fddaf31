/*-------------------------------------------------------------------------
 *
 * walrecord.c
 *	  The bytes of snowflake's WAL record: what it carries, written and
 *	  read back.  The records tell every server that replays the WAL (a
 *	  standby, a restore, crash recovery) what it cannot otherwise know of
 *	  the history (history.h):
 *	- LEADS: the history's leads changed: a raise of the lead above
 *	  SNOWFLAKE_MIN_LEAD_MS, written and flushed before IDs may lead by it
 *	  (and relied on only once the standbys the primary can see have
 *	  flushed it: standbys.c), or the lowering of such a lead;
 *	- REQUEST: a server's node id is to be confirmed before it mints;
 *	- CONFIRM: ... and was confirmed, with the node id and span.
 * A server whose history never raised the lead above the minimum, and never
 * waited for a confirmation, writes none: its WAL needs no library to be
 * replayed (docs/removing.md).
 *
 * The format and the rule for changing it are in walrecord.h.  Why the
 * reservation is not in WAL: it would have to be flushed before the IDs it
 * covers are handed out, adding a WAL flush to every reservation write, and
 * an asynchronous standby could still miss the last one; a start places
 * its first ID past the clock plus the history's lead instead (history.c).
 *
 * Custom resource managers exist from PostgreSQL 15 on and are registered
 * only from shared_preload_libraries (replay.c); without the preload
 * nothing is written, and the lead is capped at the minimum (config.h).
 *
 * Pure: no I/O, no PostgreSQL state (reservation.c inserts the bytes into
 * WAL, replay.c reads them back); the fuzz target test/fuzz/wal_record.c
 * calls the functions on any bytes.  No lock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlogrecord.h"

#include "walrecord.h"

/* The payload of each kind, after the header, in the machine's byte order. */
typedef struct SfWalLeads
{
	int64		lead_ms;
	int64		horizon_unix_ms;
} SfWalLeads;

typedef struct SfWalRequest
{
	uint64		request_id;
	uint32		request_kind;
	uint32		unused;
} SfWalRequest;

typedef struct SfWalConfirm
{
	uint64		request_id;
	int32		node_base;
	int32		node_span;
} SfWalConfirm;

/* The info code of a kind: the bits above XLR_INFO_MASK. */
#define SF_WAL_INFO(kind)	((uint8) ((kind) << 4))
#define SF_WAL_KIND(info)	((int) (((info) & ~XLR_INFO_MASK) >> 4))

/*
 * snowflake_wal_encode
 *		The bytes of a record rec, into buf (room for SNOWFLAKE_WAL_MAX_SIZE);
 *		returns how many, and its info code into *info.  Pure.
 */
size_t
snowflake_wal_encode(const SfRecord *rec, char *buf, uint8 *info)
{
	SfWalHeader hdr;
	char	   *p = buf + sizeof(hdr);

	hdr.format = SNOWFLAKE_WAL_FORMAT;
	hdr.needs = SNOWFLAKE_RELEASE_NUM;
	memcpy(buf, &hdr, sizeof(hdr));
	*info = SF_WAL_INFO(rec->kind);
	switch (rec->kind)
	{
		case SF_RECORD_LEADS:
			{
				SfWalLeads	leads = {rec->leads.lead_ms, rec->leads.horizon_unix_ms};

				memcpy(p, &leads, sizeof(leads));
				return sizeof(hdr) + sizeof(leads);
			}
		case SF_RECORD_REQUEST:
			{
				SfWalRequest request = {rec->request_id,
				(uint32) rec->request_kind, 0};

				memcpy(p, &request, sizeof(request));
				return sizeof(hdr) + sizeof(request);
			}
		case SF_RECORD_CONFIRM:
			{
				SfWalConfirm confirm = {rec->request_id, rec->node_base,
				rec->node_span};

				memcpy(p, &confirm, sizeof(confirm));
				return sizeof(hdr) + sizeof(confirm);
			}
	}
	return sizeof(hdr);
}

/*
 * snowflake_wal_decode
 *		Read the len bytes data of a record with info code info into *rec,
 *		and its header into *hdr (when there is one).  Pure.
 */
SfWalDecode
snowflake_wal_decode(uint8 info, const char *data, size_t len, SfRecord *rec,
					 SfWalHeader *hdr)
{
	int			kind = SF_WAL_KIND(info);
	const char *p = data + sizeof(SfWalHeader);
	size_t		n;

	memset(rec, 0, sizeof(*rec));
	memset(hdr, 0, sizeof(*hdr));
	if (len < sizeof(SfWalHeader))
		return SF_WAL_CORRUPT;
	n = len - sizeof(SfWalHeader);
	memcpy(hdr, data, sizeof(*hdr));
	if (hdr->needs > SNOWFLAKE_RELEASE_NUM)
		return SF_WAL_NEEDS_LATER;
	rec->kind = (SfRecordKind) kind;
	switch (kind)
	{
		case SF_RECORD_LEADS:
			{
				SfWalLeads	leads;

				if (n < sizeof(leads))
					return SF_WAL_CORRUPT;
				memcpy(&leads, p, sizeof(leads));
				rec->leads.lead_ms = leads.lead_ms;
				rec->leads.horizon_unix_ms = leads.horizon_unix_ms;
				return SF_WAL_OK;
			}
		case SF_RECORD_REQUEST:
			{
				SfWalRequest request;

				if (n < sizeof(request))
					return SF_WAL_CORRUPT;
				memcpy(&request, p, sizeof(request));
				rec->request_id = request.request_id;
				/* A kind this release does not know asks as a restore does. */
				rec->request_kind = request.request_kind >= SF_REQUEST_RESTORE &&
					request.request_kind <= SF_REQUEST_IN_SPAN ?
					(SfRequestKind) request.request_kind : SF_REQUEST_RESTORE;
				return SF_WAL_OK;
			}
		case SF_RECORD_CONFIRM:
			{
				SfWalConfirm confirm;

				if (n < sizeof(confirm))
					return SF_WAL_CORRUPT;
				memcpy(&confirm, p, sizeof(confirm));
				rec->request_id = confirm.request_id;
				rec->node_base = confirm.node_base;
				rec->node_span = confirm.node_span;
				return SF_WAL_OK;
			}
	}
	return SF_WAL_SKIP;
}

/* The name of a record's kind, for pg_waldump and pg_walinspect. */
const char *
snowflake_wal_kind_name(uint8 info)
{
	switch (SF_WAL_KIND(info))
	{
		case SF_RECORD_LEADS:
			return "LEADS";
		case SF_RECORD_REQUEST:
			return "REQUEST";
		case SF_RECORD_CONFIRM:
			return "CONFIRM";
	}
	return NULL;
}
