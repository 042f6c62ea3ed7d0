#pragma once
// How unevenly ECMP spreads flows: a switch hashes each flow's headers onto one of its equal-cost
// uplinks, so k flows land on u uplinks like k balls thrown into u bins. The busiest uplink
// carries the maximum load, and the flows on it finish last. This is the closed form beside the
// flow engine's own hashed placement (NetworkFabric::hashed_path), for symmetric patterns where
// every flow carries the same bytes.
namespace gf::topo {

// Expected maximum load of `balls` thrown uniformly and independently into `bins`, taken over
// `sets` independent throws (several leaves, each hashing its own flows): E[max over sets of
// the busiest bin]. Exact (the multinomial's distribution of the maximum) up to a size, beyond
// it each bin's load is taken as an independent binomial (within a few percent there, where
// the load is spread well anyway).
[[nodiscard]] double expected_max_load(long balls, long bins, long sets = 1);

// How much longer the busiest of `uplinks` takes than a perfect spread of `flows` equal flows
// (expected_max_load * uplinks / flows); 1 where there is nothing to collide.
[[nodiscard]] double ecmp_slowdown(long flows, long uplinks, long sets = 1);

}  // namespace gf::topo
