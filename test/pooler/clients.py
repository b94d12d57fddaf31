# Copyright: see LICENSE
#
# test/pooler/clients.py
#	Python drivers through PgBouncer in transaction mode, for
#	test/t/045_pgbouncer.pl.
#
#	clients.py load DRIVER HOST PORT DB CLIENTS TXNS
#	    DRIVER (psycopg2, psycopg, asyncpg, or sqlalchemy: SQLAlchemy's
#	    asyncio engine on asyncpg), with the setting
#	    docs/deployment/poolers.md gives for it: CLIENTS connections at
#	    once, each running TXNS transactions that insert a row of table
#	    drv keyed by DEFAULT snowflake_nextval() (a parameterized
#	    statement, the same text every time).  Prints "ok N failed M"
#	    and, for each failure class, "error CLASS".
#	clients.py forced DRIVER HOST PORT DB
#	    DRIVER (psycopg, asyncpg) with its defaults, on a pool of two
#	    server sessions that nothing else uses: connection A runs the
#	    insert until the driver prepares it (in server session 1),
#	    connection B opens a transaction (taking server session 1, the
#	    only one open), and A runs the insert again, now in server
#	    session 2, which never saw the statement.  Prints what that last
#	    insert gave: "ok" or "error CLASS SQLSTATE".
import asyncio
import sys
import threading
from collections import Counter

SQL_PG = "INSERT INTO drv (driver, client, n) VALUES (%s, %s, %s) RETURNING id"
SQL_ASYNCPG = "INSERT INTO drv (driver, client, n) VALUES ($1, $2, $3) RETURNING id"
SQL_SQLALCHEMY = "INSERT INTO drv (driver, client, n) VALUES (:driver, :client, :n) RETURNING id"


def report(ok, errors):
    print("ok", ok, "failed", sum(errors.values()))
    for name in sorted(errors):
        print("error", name)


def load_sync(driver, dsn, clients, txns):
    if driver == "psycopg2":
        import psycopg2

        # psycopg2 prepares nothing on the server: nothing to set.
        def connect():
            return psycopg2.connect(dsn)
    else:
        import psycopg

        # psycopg 3: no prepared statements behind a transaction pooler.
        def connect():
            return psycopg.connect(dsn, prepare_threshold=None)

    lock = threading.Lock()
    ok, errors = [0], Counter()

    def client(c):
        conn = connect()
        for n in range(txns):
            try:
                with conn.cursor() as cur:
                    cur.execute(SQL_PG, (driver, c, n))
                    cur.fetchone()
                conn.commit()
                with lock:
                    ok[0] += 1
            except Exception as e:  # noqa: BLE001 - counted and reported
                conn.rollback()
                with lock:
                    errors[type(e).__name__] += 1
        conn.close()

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report(ok[0], errors)


async def load_asyncpg(dsn, clients, txns):
    import asyncpg

    ok, errors = [0], Counter()

    async def client(c):
        # asyncpg: no statement cache behind a transaction pooler.
        conn = await asyncpg.connect(dsn, statement_cache_size=0)
        for n in range(txns):
            try:
                async with conn.transaction():
                    await conn.fetchval(SQL_ASYNCPG, "asyncpg", c, n)
                ok[0] += 1
            except Exception as e:  # noqa: BLE001 - counted and reported
                errors[type(e).__name__] += 1
        await conn.close()

    await asyncio.gather(*[client(c) for c in range(clients)])
    report(ok[0], errors)


async def load_sqlalchemy(host, port, db, clients, txns):
    import os
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import create_async_engine

    # SQLAlchemy on asyncpg, as docs/deployment/poolers.md sets it: no
    # statement cache in SQLAlchemy's dialect (the URL) nor in asyncpg
    # (connect_args).  One pooled connection per client.
    url = (f"postgresql+asyncpg://{os.environ['PGUSER']}@{host}:{port}/{db}"
           "?prepared_statement_cache_size=0")
    engine = create_async_engine(url, connect_args={"statement_cache_size": 0},
                                 pool_size=clients, max_overflow=0)
    ok, errors = [0], Counter()

    async def client(c):
        async with engine.connect() as conn:
            for n in range(txns):
                try:
                    async with conn.begin():
                        await conn.execute(text(SQL_SQLALCHEMY),
                                           {"driver": "sqlalchemy", "client": c, "n": n})
                    ok[0] += 1
                except Exception as e:  # noqa: BLE001 - counted and reported
                    errors[type(getattr(e, "orig", e)).__name__] += 1

    await asyncio.gather(*[client(c) for c in range(clients)])
    await engine.dispose()
    report(ok[0], errors)


def forced_psycopg(dsn):
    import psycopg

    a = psycopg.connect(dsn, autocommit=True)   # prepare_threshold: default
    for n in range(a.prepare_threshold + 1):
        a.execute(SQL_PG, ("psycopg-forced", 0, n))
    b = psycopg.connect(dsn)                     # opens a transaction
    b.execute("SELECT 1")
    try:
        a.execute(SQL_PG, ("psycopg-forced", 0, 99))
        print("ok")
    except psycopg.Error as e:
        print("error", type(e).__name__, e.sqlstate)
    b.rollback()


async def forced_asyncpg(dsn):
    import asyncpg

    a = await asyncpg.connect(dsn)               # statement cache: default
    await a.fetchval(SQL_ASYNCPG, "asyncpg-forced", 0, 0)
    b = await asyncpg.connect(dsn)
    tr = b.transaction()
    await tr.start()
    await b.execute("SELECT 1")
    try:
        await a.fetchval(SQL_ASYNCPG, "asyncpg-forced", 0, 1)
        print("ok")
    except asyncpg.PostgresError as e:
        print("error", type(e).__name__, e.sqlstate)
    await tr.rollback()


def main():
    mode, driver, host, port, db = sys.argv[1:6]
    dsn = f"host={host} port={port} dbname={db}"
    url = f"postgresql://{host}:{port}/{db}"
    if mode == "load":
        clients, txns = int(sys.argv[6]), int(sys.argv[7])
        if driver == "asyncpg":
            asyncio.run(load_asyncpg(url, clients, txns))
        elif driver == "sqlalchemy":
            asyncio.run(load_sqlalchemy(host, port, db, clients, txns))
        else:
            load_sync(driver, dsn, clients, txns)
    elif driver == "psycopg":
        forced_psycopg(dsn)
    else:
        asyncio.run(forced_asyncpg(url))


main()
