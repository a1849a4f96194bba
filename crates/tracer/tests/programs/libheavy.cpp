// Leans on libc and libstdc++: qsort, std::sort, std::string, std::map, printf.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

static int cmp(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int main() {
    std::vector<int> v;
    unsigned s = 12345;
    for (int i = 0; i < 2000; i++) {
        s = s * 1103515245u + 12345u;
        v.push_back((int)(s >> 8) % 100000);
    }
    std::vector<int> w = v;
    qsort(v.data(), v.size(), sizeof(int), cmp);
    std::sort(w.begin(), w.end());
    std::map<std::string, int> words;
    std::string text;
    for (int i = 0; i < 200; i++) {
        std::string k = "word" + std::to_string(i % 37);
        words[k] += i;
        text += k + " ";
    }
    std::printf("%d %d %zu %zu %s\n", v[0], w[1999], words.size(), text.size(), v == w ? "same" : "different");
    return v == w ? 0 : 1;
}
