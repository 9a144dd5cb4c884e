// C++ new and delete reach malloc and free on this glibc/libstdc++.
#include <memory>
#include <vector>

struct Blob { char bytes[5555]; };

int main() {
    std::vector<Blob *> v;
    v.reserve(100);
    for (int i = 0; i < 100; i++) v.push_back(new Blob());
    for (Blob *b : v) delete b;
    auto arr = std::make_unique<char[]>(6061);
    arr[0] = 1;
    return arr[0] - 1;
}
