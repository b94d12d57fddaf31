// Copyright: see LICENSE
//
// test/pooler/PoolerClient.java
//	pgjdbc through PgBouncer in transaction mode, for
//	test/t/045_pgbouncer.pl, run as a single source file: CLIENTS
//	connections at once, each running TXNS transactions that insert a row
//	of table drv keyed by DEFAULT snowflake_nextval() through one
//	PreparedStatement.  The URL carries prepareThreshold=0, as
//	docs/deployment/poolers.md says: pgjdbc then never names a server-side
//	statement.  Prints "ok N failed M" and, for each failure, "error
//	SQLSTATE".
//
//	java -cp postgresql.jar PoolerClient.java URL CLIENTS TXNS
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

public class PoolerClient {
    public static void main(String[] args) throws Exception {
        String url = args[0];
        int clients = Integer.parseInt(args[1]), txns = Integer.parseInt(args[2]);
        AtomicInteger ok = new AtomicInteger();
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            final int client = c;
            Thread t = new Thread(() -> {
                try (Connection conn = DriverManager.getConnection(url)) {
                    conn.setAutoCommit(false);
                    PreparedStatement ps = conn.prepareStatement(
                        "INSERT INTO drv (driver, client, n) VALUES ('jdbc', ?, ?) RETURNING id");
                    for (int n = 0; n < txns; n++) {
                        try {
                            ps.setInt(1, client);
                            ps.setInt(2, n);
                            try (ResultSet rs = ps.executeQuery()) { rs.next(); }
                            conn.commit();
                            ok.incrementAndGet();
                        } catch (SQLException e) {
                            errors.add(e.getSQLState());
                            conn.rollback();
                        }
                    }
                } catch (SQLException e) {
                    errors.add("connect " + e.getSQLState());
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) t.join();
        System.out.println("ok " + ok.get() + " failed " + errors.size());
        for (String e : errors) System.out.println("error " + e);
    }
}
