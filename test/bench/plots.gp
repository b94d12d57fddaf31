# test/bench/plots.gp: draw one plot of the benchmark report as SVG, from
# the data file report.pl wrote (see "The plots' data" there).
#
#   gnuplot -e "prefix='docs/performance/report'; plot='bulk'" test/bench/plots.gp
#
# reads PREFIX-PLOT.tsv and writes PREFIX-PLOT.svg; PLOT is bulk, everyday
# or decode.  run.sh runs it for every data file of a run.

data = prefix . '-' . plot . '.tsv'
set terminal svg size 760,360 dynamic noenhanced font 'DejaVu Sans,11' background '#ffffff'
set output prefix . '-' . plot . '.svg'
set datafile separator "\t"
set datafile missing 'NaN'
set key noautotitle
set border 3
set tics nomirror
set grid xtics lc rgb '#dddddd'
rows = int(system("tail -n +2 '" . data . "' | wc -l"))

if (plot eq 'bulk') {
    # Horizontal bars: the median, a whisker over the repetitions' range.
    set title 'IDs per second, one backend: SELECT count(EXPR) FROM generate_series(1, N)'
    set xlabel 'million IDs per second (median; whisker: min - max)'
    set yrange [rows - 0.5:-0.5]
    set xrange [0:*]
    set ytics scale 0
    # The clock read, the floor of any time-based ID, in grey.
    plot data using (0):0:(0):2:($0 - 0.35):($0 + 0.35):($0 == 0 ? 0xd9d9d9 : 0x9fc5e8):ytic(1) skip 1 \
             with boxxyerror fc rgb variable fs solid 1.0 border lc rgb '#555555', \
         '' using 3:0:($4 - $3):(0) skip 1 with vectors heads size screen 0.006,90 lc rgb '#333333', \
         '' using 4:0:(sprintf('  %.2f', $2)) skip 1 with labels left font ',9'
}

if (plot eq 'decode') {
    set title 'Decoding a table of keys: the cost of each form'
    set xlabel 'ns per row over count(1) (median)'
    set yrange [rows - 0.5:-0.5]
    set xrange [0:*]
    set ytics scale 0
    plot data using (0):0:(0):2:($0 - 0.35):($0 + 0.35):ytic(1) skip 1 with boxxyerror \
             fc rgb '#b6d7a8' fs solid 1.0 border lc rgb '#555555', \
         '' using 2:0:(sprintf('  %.1f', $2)) skip 1 with labels left font ',9'
}

if (plot eq 'everyday') {
    # Clustered bars: one cluster per rate, one bar per key kind, the median
    # as the bar and the p99 as the whisker's top; this machine's disk on
    # the left, the slow disk (its own scale) on the right.  Rows: this
    # disk's rates first, then the slow disk's, as many of each.
    kinds = int(system("head -n 1 '" . data . "' | awk -F'\t' '{ print (NF - 1) / 2 }'"))
    half = rows / 2
    # The disk of a panel: line N's label less its rate.
    disk_of(n) = system("awk -F'\t' 'NR == " . n . " { sub(/, [^,]*$/, \"\", $1); print $1 }' '" . data . "'")
    set ylabel 'latency, ms (bar: median; whisker: p99)'
    set yrange [0:*]
    set grid noxtics ytics lc rgb '#dddddd'
    set style data histogram
    set style histogram errorbars gap 2 lw 1
    set style fill solid 1.0 border lc rgb '#555555'
    set xtics scale 0
    colours = "#9fc5e8 #d9d9d9 #f9cb9c"
    set multiplot layout 1,2 title 'Single-row inserts from one client, real commits'
    set key top left autotitle columnhead
    set title disk_of(2)
    plot for [k=0:kinds-1] data using (column(2 + 2*k)):(column(2 + 2*k)):(column(3 + 2*k)):xtic(word(strcol(1), words(strcol(1)))) \
        every ::0::(half - 1) title columnhead(2 + 2*k) lc rgb word(colours, k + 1)
    unset ylabel
    set key off
    set title disk_of(half + 2)
    plot for [k=0:kinds-1] data using (column(2 + 2*k)):(column(2 + 2*k)):(column(3 + 2*k)):xtic(word(strcol(1), words(strcol(1)))) \
        every ::half::(rows - 1) title columnhead(2 + 2*k) lc rgb word(colours, k + 1)
    unset multiplot
}
