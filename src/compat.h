/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Every PostgreSQL-version-specific construct used by the extension.
 *
 * Supported majors: 15 (shmem_request_hook and MarkGUCPrefixReserved appear
 * there) to 19.  Code elsewhere never tests PG_VERSION_NUM.
 *
 * Checked against 19's headers (19~rc1): besides the DSM registry, the
 * tranche functions and the varlena macros below, nothing the extension
 * uses changed.  19 adds ShmemRequestStruct() and RegisterShmemCallbacks(),
 * but keeps what every major here uses: shmem_request_hook and
 * shmem_startup_hook, RequestAddinShmemSpace(), ShmemInitStruct() and the
 * named LWLock tranche requests; background worker registration,
 * WaitEventExtensionNew(), the GUC definitions and their check hooks are as
 * in 18.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_COMPAT_H
#define SNOWFLAKE_COMPAT_H

#if PG_VERSION_NUM < 150000
#error "snowflake requires PostgreSQL 15 or later"
#endif

/*
 * The varlena macros (VARDATA, VARSIZE_ANY_EXHDR, SET_VARSIZE...): in
 * varatt.h from 16 on, which postgres.h no longer includes in 19.
 */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/*
 * Wait events shown in pg_stat_activity: a call sleeping for the clock, the
 * state file's I/O, the background writer's idle wait.  PostgreSQL 17 lets
 * an extension name its own; before that every extension shares
 * "Extension".
 */
#include "utils/wait_event.h"
#if PG_VERSION_NUM >= 170000
typedef enum SfWaitEvent
{
	SF_WAIT_CLOCK,				/* a call sleeps for the clock */
	SF_WAIT_STATE_WRITE,		/* the state file is written */
	SF_WAIT_WRITER_MAIN,		/* the background writer waits for work */
	SF_WAIT_STANDBYS,			/* a raised lead waits for the standbys */
	SF_WAIT_EVENTS
} SfWaitEvent;

/* The event's number, registered by name at its first use here. */
static inline uint32
sf_wait_event(SfWaitEvent which)
{
	static const char *const names[SF_WAIT_EVENTS] = {
		"SnowflakeClock", "SnowflakeStateWrite", "SnowflakeWriterMain",
		"SnowflakeStandbys"
	};
	static uint32 events[SF_WAIT_EVENTS];

	if (events[which] == 0)
		events[which] = WaitEventExtensionNew(names[which]);
	return events[which];
}
#define SNOWFLAKE_WAIT_EVENT() sf_wait_event(SF_WAIT_CLOCK)
#define SNOWFLAKE_WAIT_EVENT_IO() sf_wait_event(SF_WAIT_STATE_WRITE)
#define SNOWFLAKE_WAIT_EVENT_WRITER() sf_wait_event(SF_WAIT_WRITER_MAIN)
#define SNOWFLAKE_WAIT_EVENT_STANDBYS() sf_wait_event(SF_WAIT_STANDBYS)
#else
#define SNOWFLAKE_WAIT_EVENT() PG_WAIT_EXTENSION
#define SNOWFLAKE_WAIT_EVENT_IO() PG_WAIT_EXTENSION
#define SNOWFLAKE_WAIT_EVENT_WRITER() PG_WAIT_EXTENSION
#define SNOWFLAKE_WAIT_EVENT_STANDBYS() PG_WAIT_EXTENSION
#endif

/*
 * The standbys a primary can see (standbys.c): a replication slot that no
 * longer reserves WAL (invalidated) has an "invalidated" cause from 16 on,
 * and only its restart_lsn reset before; the backend status of the i-th
 * backend (1-based) is fetched by another name from 17 on.
 */
#include "replication/slot.h"
#include "utils/backend_status.h"
#if PG_VERSION_NUM >= 160000
#define SF_SLOT_INVALIDATED(slot) ((slot)->data.invalidated != RS_INVAL_NONE)
#else
#define SF_SLOT_INVALIDATED(slot) false
#endif
/* From 19 on a slot names the process holding it by number, not by PID. */
#if PG_VERSION_NUM >= 190000
#include "storage/proc.h"
#define SF_SLOT_ACTIVE_PID(slot) \
	((slot)->active_proc == INVALID_PROC_NUMBER ? 0 : \
	 GetPGProcByNumber((slot)->active_proc)->pid)
#else
#define SF_SLOT_ACTIVE_PID(slot) ((slot)->active_pid)
#endif
#if PG_VERSION_NUM >= 170000
#define sf_local_beentry(i) pgstat_get_local_beentry_by_index(i)
#else
#define sf_local_beentry(i) pgstat_fetch_stat_local_beentry(i)
#endif

/*
 * Names of files in the data directory that tell how the server starts.
 * access/xlog.h has them on 15 to 19; defined here only if a later major
 * moves them.
 */
#include "access/xlog.h"
#ifndef BACKUP_LABEL_FILE
#define BACKUP_LABEL_FILE "backup_label"
#endif

/*
 * Where a setting's current value came from (PGC_S_FILE, PGC_S_SESSION...),
 * for a setting that may be only a placeholder.  find_option() is exported
 * from 16; before that the sorted array of variables is searched.
 */
#include "utils/guc_tables.h"
#if PG_VERSION_NUM >= 160000
static inline GucSource
sf_guc_source(const char *name)
{
	struct config_generic *gen = find_option(name, false, true, ERROR);

	return gen ? gen->source : PGC_S_DEFAULT;
}
#else
static inline GucSource
sf_guc_source(const char *name)
{
	struct config_generic **vars = get_guc_variables();
	int			n = GetNumConfigOptions();

	for (int i = 0; i < n; i++)
	{
		if (pg_strcasecmp(vars[i]->name, name) == 0)
			return vars[i]->source;
	}
	return PGC_S_DEFAULT;
}
#endif

/*
 * Shared state without shared_preload_libraries: the DSM registry
 * (GetNamedDSMSegment) appears in 17.  The segment's LWLock gets a tranche
 * from the shared counter once.  On 17 and 18 each process that uses it
 * names the tranche for itself (pg_stat_activity's wait_event); from 19
 * LWLockNewTrancheId takes the name and keeps it in shared memory, where
 * every process finds it, and the registry passes an argument to the init
 * callback.  On 15 and 16 SNOWFLAKE_HAVE_DSM_REGISTRY is undefined: without
 * the preload the generators raise 55000.
 */
#if PG_VERSION_NUM >= 170000
#define SNOWFLAKE_HAVE_DSM_REGISTRY 1
#include "storage/dsm_registry.h"
#include "storage/lwlock.h"
#if PG_VERSION_NUM >= 190000
typedef struct SfSegmentInit
{
	void		(*init) (void *);
} SfSegmentInit;

static inline void
sf_segment_init(void *ptr, void *arg)
{
	((SfSegmentInit *) arg)->init(ptr);
}

static inline void *
sf_get_named_segment(const char *name, size_t size, void (*init) (void *),
					 bool *found)
{
	SfSegmentInit how = {init};

	return GetNamedDSMSegment(name, size, sf_segment_init, found, &how);
}
static inline int
sf_new_tranche(const char *name)
{
	return LWLockNewTrancheId(name);
}
static inline void
sf_name_tranche(int tranche_id, const char *name)
{
}
#else
static inline void *
sf_get_named_segment(const char *name, size_t size, void (*init) (void *),
					 bool *found)
{
	return GetNamedDSMSegment(name, size, init, found);
}
static inline int
sf_new_tranche(const char *name)
{
	return LWLockNewTrancheId();
}
static inline void
sf_name_tranche(int tranche_id, const char *name)
{
	LWLockRegisterTranche(tranche_id, name);
}
#endif
#endif

/* PostgreSQL 18 lets a module state its name and version. */
#if PG_VERSION_NUM >= 180000
#define SNOWFLAKE_MODULE_MAGIC() \
	PG_MODULE_MAGIC_EXT(.name = "snowflake", .version = SNOWFLAKE_VERSION)
#else
#define SNOWFLAKE_MODULE_MAGIC() PG_MODULE_MAGIC
#endif

#endif							/* SNOWFLAKE_COMPAT_H */
