import random
random.seed(1)
d = {}
lists = []
for i in range(400000):
    k = "key%d" % random.randrange(200000)
    d.setdefault(k, []).append(i)
    if i % 7 == 0:
        lists.append([str(j) for j in range(i % 50)])
    if len(lists) > 2000:
        lists = lists[1000:]
print(len(d), sum(len(v) for v in d.values()))
