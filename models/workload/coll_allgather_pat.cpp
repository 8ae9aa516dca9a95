// PAT all-gather and reduce-scatter (NCCL 2.23+'s "Parallel Aggregated Trees", NCCL_ALGO_PAT; its
// default at one GPU per node): a binomial tree from every rank at once, the trees' messages
// aggregated per step, so that a small call takes log2(n) message times where the ring takes
// n - 1, while each rank still sends and receives (n - 1)/n S.
//
// The schedule, as NCCL's PatAGAlgorithm (src/include/collectives.h) generates it, read from that
// code and its op list dumped for n = 8, 12, 16: in dimension d a rank sends to rank - 2^d and
// receives from rank + 2^d (all-gather). Block s (rank r's copy of rank r + s's data, s = 1..n-1)
// travels its bits from the highest down: the last hop is the lowest set bit of s. A message at
// dimension d carries blocks s with lowest set bit d, the sender holding r + s - 2^d (its own, or
// received at a higher dimension). With P = nrPow2/2 (nrPow2: n rounded up to a power of two) the
// call is log2(nrPow2) messages per rank, dimension top down, the one at d carrying the
// ceil-ish count of s < n that are odd multiples of 2^d; non-powers of two skip the s >= n.
// Buffer-limited aggregation (NCCL's aggFactor A and postFreq P, from the chunk): the blocks s
// that are multiples of D = nrPow2/A go first, dimensions top down to log2(D); then for each
// residue a = s mod D in NCCL's order (a depth-first walk: a's children a + 2^k, 2^k below a's
// lowest bit, largest first) the A blocks s = a, a + D, ... at dimension lowbit(a). Every step's
// blocks go in messages of at most P blocks. A = 1 is n - 1 messages of one block (ring-like).
// reducescatter_pat is the time reverse (NCCL's PatRSAlgorithm: dimension d sends to rank + 2^d,
// partial sums travel lowest bit first, a message sent once every partial it sums has arrived),
// which is what that class's op list is for n = 8 and 16.
//
// A and P: workload.chunk 0 takes full aggregation (A = P = nrPow2/2: the closed form below). A
// chunk c > 0 is NCCL's step buffer (its chunkSize): with b the block per channel, P is the
// largest power of two with P b <= c (1 if b > c / 2), A is P doubled up to three times
// (NCCL_STEPS = 8 slots), both stopping once they reach n/2 as NCCL's loops do; blocks larger than
// c are cut into ceil(b/c) pieces, the schedule repeated per piece (NCCL's chunkCount loop).
// Simplified: a message leaves once the data it carries has arrived (NCCL's single op stream,
// its parallelFactor worker groups and the 8 buffer slots' flow control are not modelled), and
// NCCL's other orders within a step (it reads the same blocks) are not kept.
// Ideal network (per-message latency a, per-rank rate B), chunk 0:
//   T = ceil(log2 n) a + (n - 1)/n S/B   (both).
// Bus factor (n - 1)/n. No refusal of n: NCCL runs PAT at any rank count (its tuner picks it only
// at one GPU per node; NCCL_PAT_ENABLE forces it).
#include <algorithm>

#include <fmt/format.h>

#include "models/workload/collective.h"

namespace fabricsim::workload {

namespace {

// One message of every rank's schedule, relative to its sender r: to r - 2^dim (all-gather),
// carrying the blocks r + t for t in `held` (the receiver's t + 2^dim).
struct PatMessage {
  int dim;
  std::vector<int> held;
};

int lowbit(int x) {
  return __builtin_ctz(static_cast<unsigned>(x));
}

// The all-gather's messages per rank, in order, for n ranks, aggregation A and P blocks a message.
std::vector<PatMessage> pat_schedule(int n, int agg, int post) {
  int top = 0;
  while ((1 << top) < n) ++top;
  const int delta = (1 << top) / agg;  // D
  std::vector<PatMessage> out;
  auto emit = [&](int dim, const std::vector<int>& s_list) {
    for (size_t i = 0; i < s_list.size(); i += static_cast<size_t>(post)) {
      PatMessage m{dim, {}};
      for (size_t j = i; j < std::min(s_list.size(), i + static_cast<size_t>(post)); ++j)
        m.held.push_back(s_list[j] - (1 << dim));
      out.push_back(std::move(m));
    }
  };
  // Multiples of D, dimensions top down.
  for (int d = top - 1; (1 << d) >= delta; --d) {
    std::vector<int> s;
    for (int odd = 1; odd << d < n; odd += 2) s.push_back(odd << d);
    if (!s.empty()) emit(d, s);
  }
  // Residues 1..D-1, depth first (children largest first), A blocks each.
  std::vector<int> stack;
  for (int k = 0; (1 << k) < delta; ++k) stack.push_back(1 << k);  // children of 0: top last
  while (!stack.empty()) {
    const int a = stack.back();
    stack.pop_back();
    std::vector<int> s;
    for (int i = 0; i < agg && i * delta + a < n; ++i) s.push_back(i * delta + a);
    if (!s.empty()) emit(lowbit(a), s);
    for (int k = 0; k < lowbit(a); ++k) stack.push_back(a + (1 << k));
  }
  return out;
}

// NCCL's aggregation for a block of `block` bytes per channel and step buffer `chunk` (0: full).
void aggregation(int n, uint64_t block, uint64_t chunk, int& agg, int& post) {
  int pow2 = 1;
  while (pow2 < n) pow2 *= 2;
  if (chunk == 0) {
    agg = post = std::max(1, pow2 / 2);
    return;
  }
  post = 1;
  while (chunk / (block * static_cast<uint64_t>(post)) >= 2 && post < n / 2) post *= 2;
  agg = post;
  for (int d = 8; d > 1 && agg < n / 2; d /= 2) agg *= 2;
}

// An instantiated message: src -> dst, the message ids (of this channel and piece) whose data it
// forwards.
struct Msg {
  int src, dst;
  uint64_t bytes;
  std::vector<uint32_t> after;
};

void build_pat(ExecGraph& g, const CollectiveCall& c, const RankNodes& start, RankNodes& done,
               bool reduce_scatter) {
  const auto n = static_cast<int>(c.ranks.size());
  const auto ch = static_cast<uint64_t>(c.channels);
  const uint64_t block_max = piece(piece(c.bytes, static_cast<uint64_t>(n), 0), ch, 0);
  int agg = 1, post = 1;
  aggregation(n, block_max, c.chunk_bytes, agg, post);
  const uint64_t pieces =
      c.chunk_bytes ? std::max<uint64_t>(1, (block_max + c.chunk_bytes - 1) / c.chunk_bytes) : 1;
  const std::vector<PatMessage> sched = pat_schedule(n, agg, post);
  g.require(count_product({2, static_cast<uint64_t>(n), sched.size(), ch, pieces}),
            fmt::format("a PAT call of {} ranks x {} messages x {} channels x {} pieces", n,
                        sched.size(), ch, pieces));
  std::vector<Msg> msgs;
  std::vector<uint32_t> holder(static_cast<size_t>(n) * static_cast<size_t>(n));
  std::vector<uint32_t> recv_of, send_of;
  std::vector<char> forwarded;
  for (uint64_t x = 0; x < ch; ++x)
    for (uint64_t p = 0; p < pieces; ++p) {
      // The all-gather's messages: which message brought rank r its copy of r + t (kNoNode: own).
      std::fill(holder.begin(), holder.end(), kNoNode);
      msgs.clear();
      for (const PatMessage& m : sched)
        for (int r = 0; r < n; ++r) {
          Msg msg{r, ((r - (1 << m.dim)) % n + n) % n, 0, {}};
          for (const int t : m.held) {
            const int owner = (r + t) % n;
            msg.bytes +=
                piece(piece(piece(c.bytes, static_cast<uint64_t>(n), static_cast<uint64_t>(owner)),
                            ch, x),
                      pieces, p);
            const uint32_t from = holder[static_cast<size_t>(r) * n + t];
            if (t != 0 && from == kNoNode)
              throw std::logic_error("PAT schedule forwards a block not yet received");
            if (t != 0) msg.after.push_back(from);
            holder[static_cast<size_t>(msg.dst) * n + t + (1 << m.dim)] =
                static_cast<uint32_t>(msgs.size());
          }
          if (msg.bytes == 0)
            throw std::invalid_argument(
                fmt::format("{} B cannot be cut into {} ranks' blocks x {} channels x {} pieces",
                            c.bytes, n, ch, pieces));
          msgs.push_back(std::move(msg));
        }
      const auto count = static_cast<uint32_t>(msgs.size());
      if (reduce_scatter) {  // time reverse: message k becomes k' = count-1-k, dst -> src
        std::vector<Msg> rev(msgs.size());
        for (uint32_t k = 0; k < count; ++k) {
          Msg& r = rev[count - 1 - k];
          r.src = msgs[k].dst;
          r.dst = msgs[k].src;
          r.bytes = msgs[k].bytes;
          for (const uint32_t a : msgs[k].after) rev[count - 1 - a].after.push_back(count - 1 - k);
        }
        msgs = std::move(rev);
      }
      recv_of.assign(count, kNoNode);
      send_of.assign(count, kNoNode);
      forwarded.assign(count, 0);
      const auto per_rank = static_cast<uint32_t>(n);
      for (uint32_t k = 0; k < count; ++k) {
        g.set_step(static_cast<int>(k / per_rank));
        const Msg& m = msgs[k];
        std::vector<uint32_t> deps = start[static_cast<size_t>(m.src)];
        for (const uint32_t a : m.after) {
          deps.push_back(recv_of[a]);
          forwarded[a] = 1;
        }
        const int sr = c.ranks[static_cast<size_t>(m.src)],
                  dr = c.ranks[static_cast<size_t>(m.dst)];
        send_of[k] = g.add_send(sr, dr, m.bytes, static_cast<int>(x), deps);
        recv_of[k] =
            g.add_recv(dr, sr, m.bytes, static_cast<int>(x), start[static_cast<size_t>(m.dst)]);
      }
      // Done: every send (its data's arrival came before it) and each receive not forwarded.
      for (uint32_t k = 0; k < count; ++k) {
        done[static_cast<size_t>(msgs[k].src)].push_back(send_of[k]);
        if (!forwarded[k]) done[static_cast<size_t>(msgs[k].dst)].push_back(recv_of[k]);
      }
    }
}

CollectiveEntry pat(bool reduce_scatter) {
  CollectiveEntry e;
  e.description = reduce_scatter
                      ? "PAT reduce-scatter (NCCL 2.23+): partial sums up binomial trees at "
                        "doubling distances, aggregated per step: log2(n) steps at small sizes"
                      : "PAT all-gather (NCCL 2.23+): binomial trees from every rank at halving "
                        "distances, aggregated per step: log2(n) steps at small sizes";
  e.bus_factor = [](int n) { return (n - 1.0) / n; };
  e.build = [reduce_scatter](ExecGraph& g, const CollectiveCall& c, const RankNodes& start,
                             RankNodes& done) { build_pat(g, c, start, done, reduce_scatter); };
  return e;
}

}  // namespace

// Both from one file: the reduce-scatter is the all-gather's schedule reversed.
FABRICSIM_REGISTER_COLLECTIVE(allgather_pat) {
  registry.add("allgather_pat", pat(false));
  registry.add("reducescatter_pat", pat(true));
}

}  // namespace fabricsim::workload
