// std::thread workers incrementing a counter under a std::mutex; each also calls work(500).
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>
#include "work.h"

static std::mutex m;
static long counter;

static void body(int id) {
    work(500);
    for (int i = 0; i < 100; i++) {
        std::lock_guard<std::mutex> g(m);
        counter += id;
    }
}

int main() {
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; i++) ts.emplace_back(body, i);
    for (auto &t : ts) t.join();
    std::printf("mutex %p\ncounter %ld\n", (void *)&m, counter);
    return 0;
}
