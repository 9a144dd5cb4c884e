# Figure 8's LRU simulation written in awk over the trace's text form
# ("type pid file page function" per line), O(1) per request: a doubly
# linked list in arrays, most recent at the head.
BEGIN { size = 2048; n = 0; head = ""; tail = ""; reads = 0; writes = 0; misses = 0 }
$1 == 0 {
    key = $3 "," $4
    if ($5 == 0) reads++; else writes++
    if (key in prev) {
        if (key != head) {
            p = prev[key]; q = next_[key]
            next_[p] = q
            if (q != "") prev[q] = p; else tail = p
            prev[key] = ""; next_[key] = head; prev[head] = key; head = key
        }
    } else {
        misses++
        if (n == size) {
            old = tail; tail = prev[old]; next_[tail] = ""
            delete prev[old]; delete next_[old]; n--
        }
        prev[key] = ""; next_[key] = head
        if (head != "") prev[head] = key; else tail = key
        head = key; n++
    }
}
END { print "lru", size, "objects:", reads + writes, "requests,", misses, "misses" }
