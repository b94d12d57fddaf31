// Copyright: see LICENSE
//
// test/pooler/client.go
//	Go's database/sql with lib/pq through PgBouncer in transaction mode,
//	for test/t/045_pgbouncer.pl: CLIENTS goroutines at once, each on a
//	connection of its own, running TXNS transactions that insert a row of
//	table drv keyed by DEFAULT snowflake_nextval() (parameterized: lib/pq
//	prepares it unnamed, which nothing carries over, so nothing to set).
//	Prints "ok N failed M" and, for each failure, "error MESSAGE".
//
//	go run client.go CONNSTRING CLIENTS TXNS
package main

import (
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"sync"

	_ "github.com/lib/pq"
)

func main() {
	clients, _ := strconv.Atoi(os.Args[2])
	txns, _ := strconv.Atoi(os.Args[3])
	db, err := sql.Open("postgres", os.Args[1])
	if err != nil {
		panic(err)
	}
	db.SetMaxOpenConns(clients)
	var mu sync.Mutex
	var wg sync.WaitGroup
	ok, errs := 0, []string{}
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for n := 0; n < txns; n++ {
				var id int64
				tx, err := db.Begin()
				if err == nil {
					err = tx.QueryRow("INSERT INTO drv (driver, client, n) VALUES ('go', $1, $2) RETURNING id", c, n).Scan(&id)
					if err == nil {
						err = tx.Commit()
					} else {
						tx.Rollback()
					}
				}
				mu.Lock()
				if err == nil {
					ok++
				} else {
					errs = append(errs, err.Error())
				}
				mu.Unlock()
			}
		}(c)
	}
	wg.Wait()
	fmt.Printf("ok %d failed %d\n", ok, len(errs))
	for _, e := range errs {
		fmt.Println("error", e)
	}
}
