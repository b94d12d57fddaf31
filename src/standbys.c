/*-------------------------------------------------------------------------
 *
 * standbys.c
 *	  The standbys a primary can see, and how far each has flushed its WAL:
 *	  a raised lead is relied on only once all of them have flushed the
 *	  record that carries it (history.c, sf_rule_lead and
 *	  sf_rule_raise_lagging; reservation.c publishes the bound).
 *
 * Seen are: every physical replication slot that reserves WAL (its
 * restart_lsn is what its standby has flushed; a slot whose standby is
 * stopped holds the raise back, as it holds WAL back), and every physical
 * walsender streaming without one (its standby's last reported flush).  A
 * logical walsender (one that holds a logical slot) feeds a subscriber,
 * not a successor, and a walsender that only sends a base backup streams
 * no WAL of its own.  Not seen, and covered by snowflake.node_id_span or
 * by their own setting instead (docs/guarantees.md): a cascaded standby, a
 * standby fed from the archive only, one disconnected without a slot.
 *
 * Reads PostgreSQL's replication state under its own locks
 * (ReplicationSlotControlLock, each slot's and walsender's spinlock); takes
 * none of snowflake's.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlogdefs.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "replication/slot.h"
#include "replication/walsender.h"
#include "replication/walsender_private.h"
#include "storage/lwlock.h"
#include "storage/spin.h"

#include "compat.h"
#include "standbys.h"

/* The slots' holders: a walsender using a slot is counted by its slot. */
typedef struct SfSlotHolders
{
	int			n;
	pid_t	   *pids;
} SfSlotHolders;

static bool
sf_holds_slot(const SfSlotHolders *h, pid_t pid)
{
	for (int i = 0; i < h->n; i++)
		if (h->pids[i] == pid)
			return true;
	return false;
}

/* Add a standby to the list, if there is room. */
static void
sf_add(SfStandbys *out, uint64 flushed, const char *slot, pid_t pid)
{
	SfStandby  *sb;

	if (out->n >= out->max)
		return;
	sb = &out->standbys[out->n++];
	sb->flushed = flushed;
	sb->pid = (int) pid;
	strlcpy(sb->slot, slot != NULL ? slot : "", sizeof(sb->slot));
}

/* The physical slots that reserve WAL; every slot holder's PID into h. */
static void
sf_slots(SfStandbys *out, SfSlotHolders *h)
{
	LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
	for (int i = 0; i < max_replication_slots; i++)
	{
		ReplicationSlot *slot = &ReplicationSlotCtl->replication_slots[i];
		XLogRecPtr	restart;
		pid_t		active;
		bool		physical;
		bool		invalid;
		NameData	name;

		if (!slot->in_use)
			continue;
		SpinLockAcquire(&slot->mutex);
		restart = slot->data.restart_lsn;
		active = SF_SLOT_ACTIVE_PID(slot);
		physical = SlotIsPhysical(slot);
		invalid = SF_SLOT_INVALIDATED(slot);
		name = slot->data.name;
		SpinLockRelease(&slot->mutex);
		if (active != 0)
			h->pids[h->n++] = active;
		if (physical && !invalid && !XLogRecPtrIsInvalid(restart))
			sf_add(out, restart, NameStr(name), active);
	}
	LWLockRelease(ReplicationSlotControlLock);
}

/*
 * snowflake_standbys
 *		The standbys this primary can see and how far each has flushed, into
 *		*out (its standbys array has room for out->max; those past it are
 *		left out, and out->n says how many are listed).
 */
void
snowflake_standbys(SfStandbys *out)
{
	SfSlotHolders holders;

	out->n = 0;
	holders.n = 0;
	holders.pids = palloc(sizeof(pid_t) * Max(max_replication_slots, 1));
	sf_slots(out, &holders);
	for (int i = 0; WalSndCtl != NULL && i < max_wal_senders; i++)
	{
		WalSnd	   *w = &WalSndCtl->walsnds[i];
		pid_t		pid;
		WalSndState state;
		XLogRecPtr	flush;

		SpinLockAcquire(&w->mutex);
		pid = w->pid;
		state = w->state;
		flush = w->flush;
		SpinLockRelease(&w->mutex);
		if (pid == 0 || state == WALSNDSTATE_BACKUP ||
			state == WALSNDSTATE_STOPPING || sf_holds_slot(&holders, pid))
			continue;
		sf_add(out, flush, NULL, pid);
	}
	pfree(holders.pids);
}

/*
 * snowflake_standby_name
 *		A standby as a message fragment: its replication slot, or the
 *		walsender streaming to it with the application_name its standby
 *		gave.  Reads the backends' status: call in a backend.
 */
void
snowflake_standby_name(const SfStandby *sb, char *buf, size_t len)
{
	const char *app = NULL;

	if (sb->slot[0] != '\0')
	{
		snprintf(buf, len, "replication slot \"%s\"", sb->slot);
		return;
	}
	for (int i = 1; i <= pgstat_fetch_stat_numbackends(); i++)
	{
		LocalPgBackendStatus *local = sf_local_beentry(i);

		if (local != NULL && local->backendStatus.st_procpid == sb->pid)
		{
			app = local->backendStatus.st_appname;
			break;
		}
	}
	if (app != NULL && app[0] != '\0')
		snprintf(buf, len, "standby \"%s\" (walsender PID %d)", app, (int) sb->pid);
	else
		snprintf(buf, len, "the standby of walsender PID %d", (int) sb->pid);
}
