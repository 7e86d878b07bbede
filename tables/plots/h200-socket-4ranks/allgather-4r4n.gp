# allgather-4r4n.gp - written by ccltune 0.1.0 plot.  Redraw with `gnuplot allgather-4r4n.gp` in this folder:
# it reads allgather-4r4n-*.dat and writes allgather-4r4n-time.{png,svg} and allgather-4r4n-busbw.{png,svg}.
# Measured: median per size, error bars min..max; lines without points: the
# table's fitted models; wide grey: the table's choice per band (light amber:
# left to NCCL, following NCCL's default).
set encoding utf8
png_terminal = strstrt(GPVAL_TERMINALS . ' ', ' pngcairo ') > 0 ? "pngcairo size 1400,860 noenhanced font 'Sans,10'" : "png size 1400,860 noenhanced"
svg_terminal = "svg size 1400,860 dynamic noenhanced font 'Sans,10' background rgb 'white'"
time_title = 'allgather, 4 ranks (4 nodes): time per call' . "\n" . 'NVIDIA H200, NCCL 2.28.9, socket links, 4 ranks per GPU, run 1'
busbw_title = 'allgather, 4 ranks (4 nodes): bus bandwidth' . "\n" . 'NVIDIA H200, NCCL 2.28.9, socket links, 4 ranks per GPU, run 1'
set logscale x 2
set xrange [896:18874368]
set xtics ("1 KiB" 1024, "4 KiB" 4096, "16 KiB" 16384, "64 KiB" 65536, "256 KiB" 262144, "1 MiB" 1048576, "4 MiB" 4194304, "16 MiB" 16777216)
set xlabel 'message size (bytes NCCL passes its tuner)'
set grid xtics ytics mytics lc rgb '#e0e0e0'
set key outside right top vertical noenhanced font ',9' spacing 1.1
set bars small
set label 1 'ring/ll 1 ch' at first 1024, graph 0.98 rotate by 90 right offset character 1,0 font ',8' tc rgb '#505050' front
set arrow 2 from first 8193, graph 0 to first 8193, graph 1 nohead dt 3 lc rgb '#909090' back
set label 2 'left to NCCL (ring/ll)' at first 8193, graph 0.98 rotate by 90 right offset character 1,0 font ',8' tc rgb '#505050' front
set arrow 3 from first 32768, graph 0 to first 32768, graph 1 nohead dt 3 lc rgb '#909090' back
set label 3 'ring/ll 1 ch' at first 32768, graph 0.98 rotate by 90 right offset character 1,0 font ',8' tc rgb '#505050' front
set arrow 4 from first 137804, graph 0 to first 137804, graph 1 nohead dt 3 lc rgb '#909090' back
set label 4 'ring/simple 1 ch' at first 137804, graph 0.98 rotate by 90 right offset character 1,0 font ',8' tc rgb '#505050' front
set arrow 5 from first 3145729, graph 0 to first 3145729, graph 1 nohead dt 3 lc rgb '#909090' back
set label 5 'left to NCCL (ring/simple)' at first 3145729, graph 0.98 rotate by 90 right offset character 1,0 font ',8' tc rgb '#505050' front
do for [fmt in 'png svg'] {
    eval 'set terminal ' . (fmt eq 'png' ? png_terminal : svg_terminal)
    set output 'allgather-4r4n-time.' . fmt
    set title time_title
    set logscale y 10
    set yrange [*:*]
    set ylabel 'time per call (µs)'
    plot 'allgather-4r4n-envelope.dat' index 0 using 1:2 with lines lw 9 lc rgb '#c8c8c8' title 'chosen by the table', \
         'allgather-4r4n-envelope.dat' index 1 using 1:2 with lines lw 9 lc rgb '#f2d49b' title 'NCCL''s choice (band left to NCCL)', \
         'allgather-4r4n-envelope.dat' index 2:3 using 1:2 with lines lw 9 lc rgb '#c8c8c8' notitle, \
         'allgather-4r4n-envelope.dat' index 4 using 1:2 with lines lw 9 lc rgb '#f2d49b' notitle, \
         'allgather-4r4n-measured.dat' index 0 using 1:2:3:4 with yerrorlines lw 3 pt 7 ps 1.1 lc rgb 'black' title 'NCCL default', \
         'allgather-4r4n-measured.dat' index 1 using 1:2:3:4 with yerrorbars lc rgb '#9467bd' pt 7 ps 0.8 dt 1 title 'ring/ll', \
         'allgather-4r4n-models.dat' index 0 using 1:2 with lines lw 1.5 lc rgb '#9467bd' dt 1 notitle, \
         'allgather-4r4n-measured.dat' index 2 using 1:2:3:4 with yerrorbars lc rgb '#9467bd' pt 9 ps 0.8 dt 2 title 'ring/ll 1 ch', \
         'allgather-4r4n-models.dat' index 1 using 1:2 with lines lw 1.5 lc rgb '#9467bd' dt 2 notitle, \
         'allgather-4r4n-measured.dat' index 3 using 1:2:3:4 with yerrorbars lc rgb '#9467bd' pt 5 ps 0.8 dt 3 title 'ring/ll 2 ch', \
         'allgather-4r4n-models.dat' index 2 using 1:2 with lines lw 1.5 lc rgb '#9467bd' dt 3 notitle, \
         'allgather-4r4n-measured.dat' index 4 using 1:2:3:4 with yerrorbars lc rgb '#9467bd' pt 13 ps 0.8 dt 4 title 'ring/ll 64 ch', \
         'allgather-4r4n-models.dat' index 3 using 1:2 with lines lw 1.5 lc rgb '#9467bd' dt 4 notitle, \
         'allgather-4r4n-measured.dat' index 5 using 1:2:3:4 with yerrorlines lc rgb '#8c564b' pt 7 ps 0.8 dt 1 title 'ring/ll128', \
         'allgather-4r4n-measured.dat' index 6 using 1:2:3:4 with yerrorlines lc rgb '#8c564b' pt 9 ps 0.8 dt 2 title 'ring/ll128 1 ch', \
         'allgather-4r4n-measured.dat' index 7 using 1:2:3:4 with yerrorlines lc rgb '#8c564b' pt 5 ps 0.8 dt 3 title 'ring/ll128 2 ch', \
         'allgather-4r4n-measured.dat' index 8 using 1:2:3:4 with yerrorlines lc rgb '#8c564b' pt 13 ps 0.8 dt 4 title 'ring/ll128 64 ch', \
         'allgather-4r4n-measured.dat' index 9 using 1:2:3:4 with yerrorbars lc rgb '#e377c2' pt 7 ps 0.8 dt 1 title 'ring/simple', \
         'allgather-4r4n-models.dat' index 4 using 1:2 with lines lw 1.5 lc rgb '#e377c2' dt 1 notitle, \
         'allgather-4r4n-measured.dat' index 10 using 1:2:3:4 with yerrorbars lc rgb '#e377c2' pt 9 ps 0.8 dt 2 title 'ring/simple 1 ch', \
         'allgather-4r4n-models.dat' index 5 using 1:2 with lines lw 1.5 lc rgb '#e377c2' dt 2 notitle, \
         'allgather-4r4n-measured.dat' index 11 using 1:2:3:4 with yerrorbars lc rgb '#e377c2' pt 5 ps 0.8 dt 3 title 'ring/simple 2 ch', \
         'allgather-4r4n-models.dat' index 6 using 1:2 with lines lw 1.5 lc rgb '#e377c2' dt 3 notitle, \
         'allgather-4r4n-measured.dat' index 12 using 1:2:3:4 with yerrorbars lc rgb '#e377c2' pt 13 ps 0.8 dt 4 title 'ring/simple 64 ch', \
         'allgather-4r4n-models.dat' index 7 using 1:2 with lines lw 1.5 lc rgb '#e377c2' dt 4 notitle
    set output 'allgather-4r4n-busbw.' . fmt
    set title busbw_title
    unset logscale y
    set yrange [0:*]
    set ylabel 'bus bandwidth (GB/s, nccl-tests busbw)'
    plot 'allgather-4r4n-envelope.dat' index 0 using 1:3 with lines lw 9 lc rgb '#c8c8c8' title 'chosen by the table', \
         'allgather-4r4n-envelope.dat' index 1 using 1:3 with lines lw 9 lc rgb '#f2d49b' title 'NCCL''s choice (band left to NCCL)', \
         'allgather-4r4n-envelope.dat' index 2:3 using 1:3 with lines lw 9 lc rgb '#c8c8c8' notitle, \
         'allgather-4r4n-envelope.dat' index 4 using 1:3 with lines lw 9 lc rgb '#f2d49b' notitle, \
         'allgather-4r4n-measured.dat' index 0 using 1:6:7:8 with yerrorlines lw 3 pt 7 ps 1.1 lc rgb 'black' title 'NCCL default', \
         'allgather-4r4n-measured.dat' index 1 using 1:6:7:8 with yerrorbars lc rgb '#9467bd' pt 7 ps 0.8 dt 1 title 'ring/ll', \
         'allgather-4r4n-models.dat' index 0 using 1:3 with lines lw 1.5 lc rgb '#9467bd' dt 1 notitle, \
         'allgather-4r4n-measured.dat' index 2 using 1:6:7:8 with yerrorbars lc rgb '#9467bd' pt 9 ps 0.8 dt 2 title 'ring/ll 1 ch', \
         'allgather-4r4n-models.dat' index 1 using 1:3 with lines lw 1.5 lc rgb '#9467bd' dt 2 notitle, \
         'allgather-4r4n-measured.dat' index 3 using 1:6:7:8 with yerrorbars lc rgb '#9467bd' pt 5 ps 0.8 dt 3 title 'ring/ll 2 ch', \
         'allgather-4r4n-models.dat' index 2 using 1:3 with lines lw 1.5 lc rgb '#9467bd' dt 3 notitle, \
         'allgather-4r4n-measured.dat' index 4 using 1:6:7:8 with yerrorbars lc rgb '#9467bd' pt 13 ps 0.8 dt 4 title 'ring/ll 64 ch', \
         'allgather-4r4n-models.dat' index 3 using 1:3 with lines lw 1.5 lc rgb '#9467bd' dt 4 notitle, \
         'allgather-4r4n-measured.dat' index 5 using 1:6:7:8 with yerrorlines lc rgb '#8c564b' pt 7 ps 0.8 dt 1 title 'ring/ll128', \
         'allgather-4r4n-measured.dat' index 6 using 1:6:7:8 with yerrorlines lc rgb '#8c564b' pt 9 ps 0.8 dt 2 title 'ring/ll128 1 ch', \
         'allgather-4r4n-measured.dat' index 7 using 1:6:7:8 with yerrorlines lc rgb '#8c564b' pt 5 ps 0.8 dt 3 title 'ring/ll128 2 ch', \
         'allgather-4r4n-measured.dat' index 8 using 1:6:7:8 with yerrorlines lc rgb '#8c564b' pt 13 ps 0.8 dt 4 title 'ring/ll128 64 ch', \
         'allgather-4r4n-measured.dat' index 9 using 1:6:7:8 with yerrorbars lc rgb '#e377c2' pt 7 ps 0.8 dt 1 title 'ring/simple', \
         'allgather-4r4n-models.dat' index 4 using 1:3 with lines lw 1.5 lc rgb '#e377c2' dt 1 notitle, \
         'allgather-4r4n-measured.dat' index 10 using 1:6:7:8 with yerrorbars lc rgb '#e377c2' pt 9 ps 0.8 dt 2 title 'ring/simple 1 ch', \
         'allgather-4r4n-models.dat' index 5 using 1:3 with lines lw 1.5 lc rgb '#e377c2' dt 2 notitle, \
         'allgather-4r4n-measured.dat' index 11 using 1:6:7:8 with yerrorbars lc rgb '#e377c2' pt 5 ps 0.8 dt 3 title 'ring/simple 2 ch', \
         'allgather-4r4n-models.dat' index 6 using 1:3 with lines lw 1.5 lc rgb '#e377c2' dt 3 notitle, \
         'allgather-4r4n-measured.dat' index 12 using 1:6:7:8 with yerrorbars lc rgb '#e377c2' pt 13 ps 0.8 dt 4 title 'ring/simple 64 ch', \
         'allgather-4r4n-models.dat' index 7 using 1:3 with lines lw 1.5 lc rgb '#e377c2' dt 4 notitle
    unset output
}
