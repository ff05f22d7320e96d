// The C++ side of `entity-layouts bench --only cpp`: the C++ data-oriented-design article's two
// programs, written by this project from the article's text, and the project's own `move` and
// `regen` systems over SoA and AoS, so that Rust and C++ are compared on one workload. The
// bench compiles this file with the machine's C++ compiler at the article's flags
// (-O2 -march=native) and at a portable baseline (-O2), and runs one program per process:
//
//   layouts <program> <entities> [--frames K]
//
// program: oop  the article's OOP: std::vector<std::unique_ptr<Entity>>, a virtual update,
//               objects on the heap in allocation order ({pos, vel, hp, name, active, vtbl})
//          ecs  the article's ECSWorld: component vectors, a component mask and an active flag
//               per entity, a __restrict movement system; 3D pos += vel * dt
//          soa  our move + regen over one std::vector per field (x, y, vx, vy, hp, energy,
//               regen, armor: the JS study's eight fields, f32)
//          aos  the same over one std::vector of a 32-byte struct
//
// Without --frames it times frames (warm-up, then samples of at least 1 ms each until about a
// second has passed) and prints one JSON object: p10/p50/p90 ms per frame and a checksum of the
// state. With --frames K it runs K frames and prints only the checksum: cachegrind counts two
// such runs and takes their difference.

#include <algorithm>
#include <bitset>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr float DT = 1.0f / 60.0f;
constexpr float WORLD_WIDTH = 1600.0f;
constexpr float WORLD_HEIGHT = 900.0f;
constexpr float MAX_ENERGY = 100.0f;

// Seeded values, the same for every program and run (splitmix64).
struct Rng {
    uint64_t s;
    float next(float lo, float hi) {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        return lo + (hi - lo) * static_cast<float>(z >> 40) / static_cast<float>(1ull << 24);
    }
};

uint64_t mix(uint64_t h, float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return (h ^ bits) * 0x100000001B3ull;
}

// ---- The article's OOP program ------------------------------------------------------------

struct Vec3 {
    float x = 0.f, y = 0.f, z = 0.f;
};

class Entity {
public:
    virtual ~Entity() = default;
    virtual void update(float dt) = 0;
    virtual uint64_t hash(uint64_t h) const = 0;
};

class Mover final : public Entity {
public:
    Vec3 pos, vel;
    int hp = 100;
    std::string name;
    bool is_active = true;

    void update(float dt) override {
        if (!is_active) return;
        pos.x += vel.x * dt;
        pos.y += vel.y * dt;
        pos.z += vel.z * dt;
    }
    uint64_t hash(uint64_t h) const override { return mix(mix(mix(h, pos.x), pos.y), pos.z); }
};

struct Oop {
    std::vector<std::unique_ptr<Entity>> entities;
    explicit Oop(size_t n) {
        Rng rng{1};
        entities.reserve(n);
        for (size_t i = 0; i < n; ++i) {
            auto e = std::make_unique<Mover>();
            e->pos = {rng.next(0, 1000), rng.next(0, 1000), rng.next(0, 1000)};
            e->vel = {rng.next(-1, 1), rng.next(-1, 1), rng.next(-1, 1)};
            e->name = "entity";
            entities.push_back(std::move(e));
        }
    }
    void frame() {
        for (auto& e : entities) e->update(DT);
    }
    uint64_t checksum() const {
        uint64_t h = 0xcbf29ce484222325ull;
        for (const auto& e : entities) h = e->hash(h);
        return h;
    }
};

// ---- The article's ECSWorld ----------------------------------------------------------------

struct Position {
    float x = 0.f, y = 0.f, z = 0.f;
};
struct Velocity {
    float x = 0.f, y = 0.f, z = 0.f;
};
struct Health {
    int value = 100;
};
struct ActiveFlag {
    bool is_active = true;
};

enum ComponentID : uint8_t { COMP_POSITION = 0, COMP_VELOCITY, COMP_HEALTH, COMP_ACTIVE_FLAG, COMP_COUNT };
using ComponentMask = std::bitset<COMP_COUNT>;
using EntityId = uint32_t;

class ECSWorld {
public:
    std::vector<ComponentMask> masks;
    std::vector<Position> positions;
    std::vector<Velocity> velocities;
    std::vector<Health> healths;
    std::vector<ActiveFlag> active_flags;
    size_t entity_count = 0;

    EntityId create_entity() {
        EntityId id = static_cast<EntityId>(entity_count++);
        masks.emplace_back();
        positions.emplace_back();
        velocities.emplace_back();
        healths.emplace_back();
        active_flags.emplace_back();
        return id;
    }
    void add_position(EntityId e, Position p) {
        positions[e] = p;
        masks[e].set(COMP_POSITION);
    }
    void add_velocity(EntityId e, Velocity v) {
        velocities[e] = v;
        masks[e].set(COMP_VELOCITY);
    }
    void add_active_flag(EntityId e) {
        active_flags[e].is_active = true;
        masks[e].set(COMP_ACTIVE_FLAG);
    }
    bool has_components(EntityId e, ComponentMask required) const { return (masks[e] & required) == required; }
};

void movement_system(ECSWorld& world, float dt) {
    ComponentMask required;
    required.set(COMP_POSITION).set(COMP_VELOCITY).set(COMP_ACTIVE_FLAG);
    Position* __restrict pos = world.positions.data();
    const Velocity* __restrict vel = world.velocities.data();
    const ActiveFlag* __restrict act = world.active_flags.data();
    for (size_t i = 0; i < world.entity_count; ++i) {
        if (!world.has_components(static_cast<EntityId>(i), required)) continue;
        if (!act[i].is_active) continue;
        pos[i].x += vel[i].x * dt;
        pos[i].y += vel[i].y * dt;
        pos[i].z += vel[i].z * dt;
    }
}

struct Ecs {
    ECSWorld world;
    explicit Ecs(size_t n) {
        Rng rng{1};
        for (size_t i = 0; i < n; ++i) {
            EntityId e = world.create_entity();
            world.add_position(e, {rng.next(0, 1000), rng.next(0, 1000), rng.next(0, 1000)});
            world.add_velocity(e, {rng.next(-1, 1), rng.next(-1, 1), rng.next(-1, 1)});
            world.add_active_flag(e);
        }
    }
    void frame() { movement_system(world, DT); }
    uint64_t checksum() const {
        uint64_t h = 0xcbf29ce484222325ull;
        for (const auto& p : world.positions) h = mix(mix(mix(h, p.x), p.y), p.z);
        return h;
    }
};

// ---- Our move and regen, as in src/workload.rs ---------------------------------------------

// `workload::wrap`: into [0, extent), a step shorter than the world assumed.
inline float wrap(float v, float extent) {
    if (v < 0.f) {
        float w = v + extent;
        return w < extent ? w : 0.f;
    }
    if (v >= extent) return v - extent;
    return v;
}

inline float regen_one(float energy, float regen, float dt) {
    float e = energy + regen * dt;
    return e > MAX_ENERGY ? MAX_ENERGY : e;
}

struct State {
    float x, y, vx, vy, hp, energy, regen, armor;
};
static_assert(sizeof(State) == 32, "the 32-byte entity of the Rust aos layout");

State spawn(Rng& rng) {
    State s;
    s.x = rng.next(0, WORLD_WIDTH);
    s.y = rng.next(0, WORLD_HEIGHT);
    s.vx = rng.next(-120, 120);
    s.vy = rng.next(-120, 120);
    s.hp = rng.next(50, 150);
    s.energy = rng.next(0, MAX_ENERGY);
    s.regen = rng.next(0, 10);
    s.armor = rng.next(0, 20);
    return s;
}

struct Soa {
    std::vector<float> x, y, vx, vy, hp, energy, regen, armor;
    explicit Soa(size_t n) {
        Rng rng{1};
        for (auto* v : {&x, &y, &vx, &vy, &hp, &energy, &regen, &armor}) v->reserve(n);
        for (size_t i = 0; i < n; ++i) {
            State s = spawn(rng);
            x.push_back(s.x), y.push_back(s.y), vx.push_back(s.vx), vy.push_back(s.vy);
            hp.push_back(s.hp), energy.push_back(s.energy), regen.push_back(s.regen), armor.push_back(s.armor);
        }
    }
    void frame() {
        const size_t n = x.size();
        float* __restrict px = x.data();
        float* __restrict py = y.data();
        const float* __restrict pvx = vx.data();
        const float* __restrict pvy = vy.data();
        for (size_t i = 0; i < n; ++i) {
            px[i] = wrap(px[i] + pvx[i] * DT, WORLD_WIDTH);
            py[i] = wrap(py[i] + pvy[i] * DT, WORLD_HEIGHT);
        }
        float* __restrict pe = energy.data();
        const float* __restrict pr = regen.data();
        for (size_t i = 0; i < n; ++i) pe[i] = regen_one(pe[i], pr[i], DT);
    }
    uint64_t checksum() const {
        uint64_t h = 0xcbf29ce484222325ull;
        for (size_t i = 0; i < x.size(); ++i) h = mix(mix(mix(h, x[i]), y[i]), energy[i]);
        return h;
    }
};

struct Aos {
    std::vector<State> entities;
    explicit Aos(size_t n) {
        Rng rng{1};
        entities.reserve(n);
        for (size_t i = 0; i < n; ++i) entities.push_back(spawn(rng));
    }
    void frame() {
        for (State& s : entities) {
            s.x = wrap(s.x + s.vx * DT, WORLD_WIDTH);
            s.y = wrap(s.y + s.vy * DT, WORLD_HEIGHT);
        }
        for (State& s : entities) s.energy = regen_one(s.energy, s.regen, DT);
    }
    uint64_t checksum() const {
        uint64_t h = 0xcbf29ce484222325ull;
        for (const State& s : entities) h = mix(mix(mix(h, s.x), s.y), s.energy);
        return h;
    }
};

double now_ms() {
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}

// Times `frame` as the Rust harness does: warm-up, then samples of at least 1 ms (several frames
// each for small counts), p10/p50/p90 of the per-frame times.
template <class W>
int run(const char* program, size_t n, long frames) {
    W world(n);
    if (frames >= 0) {
        for (long f = 0; f < frames; ++f) world.frame();
        std::printf("{\"program\":\"%s\",\"n\":%zu,\"frames\":%ld,\"checksum\":\"%016llx\"}\n", program, n, frames,
                    static_cast<unsigned long long>(world.checksum()));
        return 0;
    }
    for (int i = 0; i < 3; ++i) world.frame();
    double t0 = now_ms();
    world.frame();
    double one = std::max(now_ms() - t0, 1e-6);
    long repeats = std::max(1L, static_cast<long>(1.0 / one));
    std::vector<double> samples;
    double start = now_ms();
    while (samples.size() < 15 || (now_ms() - start < 1000.0 && samples.size() < 200)) {
        double s = now_ms();
        for (long r = 0; r < repeats; ++r) world.frame();
        samples.push_back((now_ms() - s) / static_cast<double>(repeats));
    }
    std::sort(samples.begin(), samples.end());
    auto at = [&](double q) { return samples[static_cast<size_t>(q * static_cast<double>(samples.size() - 1))]; };
    std::printf(
        "{\"program\":\"%s\",\"n\":%zu,\"p10\":%.6f,\"p50\":%.6f,\"p90\":%.6f,\"samples\":%zu,\"repeats\":%ld,"
        "\"checksum\":\"%016llx\"}\n",
        program, n, at(0.1), at(0.5), at(0.9), samples.size(), repeats,
        static_cast<unsigned long long>(world.checksum()));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s oop|ecs|soa|aos ENTITIES [--frames K]\n", argv[0]);
        return 2;
    }
    std::string program = argv[1];
    char* end = nullptr;
    unsigned long long n = std::strtoull(argv[2], &end, 10);
    if (*end != '\0' || n == 0 || n > 100000000ull) {
        std::fprintf(stderr, "entities: %s is not a count from 1 to 100000000\n", argv[2]);
        return 2;
    }
    long frames = -1;
    if (argc == 5 && std::string(argv[3]) == "--frames") frames = std::strtol(argv[4], nullptr, 10);
    if (program == "oop") return run<Oop>("oop", n, frames);
    if (program == "ecs") return run<Ecs>("ecs", n, frames);
    if (program == "soa") return run<Soa>("soa", n, frames);
    if (program == "aos") return run<Aos>("aos", n, frames);
    std::fprintf(stderr, "program: %s is not one of oop, ecs, soa, aos\n", program.c_str());
    return 2;
}
