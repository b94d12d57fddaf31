/*-------------------------------------------------------------------------
 *
 * reservation.h
 *	  The durable reservation, the floor of every start, the history's
 *	  leads and the raise that waits for the standbys, the adoption of a
 *	  changed layout or derived node id, and the request and confirmation
 *	  of a node id (reservation.c).
 *
 * Everything here runs under the "snowflake" LWLock (shared.h), taking the
 * spinlock inside it only to publish values.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_RESERVATION_H
#define SNOWFLAKE_RESERVATION_H

#include "layout.h"
#include "shared.h"
#include "standbys.h"
#include "statefile.h"

/*
 * How far past the millisecond that needs it a new reservation is written.
 * At full speed the generator crosses a reservation about twice a second.
 */
#define SNOWFLAKE_RESERVE_AHEAD_MS	500

/*
 * The renewal point: once the later of the clock and the last issued ID
 * comes within this many milliseconds of the reservation, the background
 * writer extends it (a caller crossing it wakes the writer, or writes early
 * itself when there is no writer).  The writer has this long to finish a
 * write before a caller at the clock's pace finds the reservation used up.
 */
#define SNOWFLAKE_RENEW_MS	(SNOWFLAKE_RESERVE_AHEAD_MS / 2)

/* Who extends the reservation, and how (snowflake_extend_reservation). */
typedef enum SfExtendMode
{
	SF_EXTEND_NEEDED,			/* a caller whose IDs wait for it */
	SF_EXTEND_EARLY,			/* a caller whose IDs are issued already */
	SF_EXTEND_BACKGROUND		/* the background writer */
} SfExtendMode;

extern SNOWFLAKE_INTERNAL bool snowflake_extend_reservation(int64 needed_ms, int64 now_ms,
														 SfExtendMode mode,
														 SfWriteFailure *failure);
extern SNOWFLAKE_INTERNAL void snowflake_adopt_layout_state(int64 now_unix_ms,
														 bool force);
extern SNOWFLAKE_INTERNAL int snowflake_adopt_node_state(int64 now_unix_ms);
extern SNOWFLAKE_INTERNAL void snowflake_confirm_restore_state(int node);
extern SNOWFLAKE_INTERNAL bool snowflake_raise_settle(SnowflakeShared *s,
												   SfStandby *lagging);
extern SNOWFLAKE_INTERNAL void snowflake_log_request(SnowflakeShared *s);

#endif							/* SNOWFLAKE_RESERVATION_H */
