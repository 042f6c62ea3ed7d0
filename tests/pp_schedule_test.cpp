// Megatron's pipeline schedules as a task graph: the order of each stage's ops, the bubble the
// graph gives, and the closed form the planner uses against the graph.
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <tuple>

#include "sim/engine.hpp"
#include "work/pp_schedule.hpp"

namespace gf::work {
namespace {

std::string spell(const std::vector<PipelineOp>& ops) {
  std::string s;
  for (const auto& op : ops) {
    if (!s.empty()) s.push_back(' ');
    s.push_back(op.forward ? 'F' : 'B');
    s.append(std::to_string(op.micro_batch));
    if (op.chunk > 0) {
      s.push_back('.');
      s.append(std::to_string(op.chunk));
    }
  }
  return s;
}

double makespan(const PipelineShape& s, double f, double b, double c) {
  const std::vector<double> no_links;
  return run_pipeline(build_pipeline(s, f, b, fixed_transfers(c)), no_links, false).makespan_s;
}

// 1F1B (schedules.py, forward_backward_pipelining_without_interleaving): stage s runs
// PP - s - 1 forwards first, then a forward and a backward in turn, then the rest backwards.
// Interleaved (with_interleaving): the virtual micro-batches go round the chunks in groups of
// PP micro-batches, the warm-up is 2 (PP - s - 1) + (chunks - 1) PP, backwards take the chunks
// in reverse.
TEST(PipelineSchedule, StageOrderIsMegatrons) {
  EXPECT_EQ(spell(stage_order({4, 1, 6}, 0)), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  EXPECT_EQ(spell(stage_order({4, 1, 6}, 3)), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
  EXPECT_EQ(spell(stage_order({4, 1, 2}, 0)), "F0 F1 B0 B1");  // fewer micro-batches than the warm-up
  EXPECT_EQ(spell(stage_order({2, 2, 4}, 0)), "F0 F1 F0.1 F1.1 F2 B0.1 F3 B1.1 F2.1 B0 F3.1 B1 B2.1 B3.1 B2 B3");
  EXPECT_EQ(spell(stage_order({2, 2, 4}, 1)), "F0 F1 F0.1 B0.1 F1.1 B1.1 F2 B0 F3 B1 F2.1 B2.1 F3.1 B3.1 B2 B3");
  // As many micro-batches as stages: every forward first.
  EXPECT_EQ(spell(stage_order({2, 2, 2}, 1)), "F0 F1 F0.1 F1.1 B0.1 B1.1 B0 B1");
}

TEST(PipelineSchedule, EveryStageRunsEachOpOnceAndABackwardAfterItsForward) {
  for (const auto& s : {PipelineShape{4, 1, 8}, PipelineShape{8, 1, 3}, PipelineShape{4, 2, 8}, PipelineShape{3, 3, 9},
                        PipelineShape{8, 4, 16}}) {
    for (long stage = 0; stage < s.stages; ++stage) {
      const auto ops = stage_order(s, stage);
      std::set<std::tuple<bool, long, long>> seen;
      for (const auto& op : ops) {
        EXPECT_TRUE(seen.insert({op.forward, op.micro_batch, op.chunk}).second);
        if (!op.forward) {
          EXPECT_TRUE(seen.count({true, op.micro_batch, op.chunk}));
        }
      }
      EXPECT_EQ(static_cast<long>(ops.size()), 2 * s.micro_batches * s.chunks);
    }
  }
}

// Megatron runs the interleaved schedule only with micro-batches in whole groups of PP.
TEST(PipelineSchedule, InterleavedNeedsWholeGroupsOfMicroBatches) {
  EXPECT_THROW((void)stage_order({4, 2, 6}, 0), std::invalid_argument);
  EXPECT_NO_THROW((void)stage_order({4, 1, 6}, 0));
}

// Without transfer costs the graph gives the textbook bubble, (PP - 1) x (forward + backward)
// of one chunk: 1F1B's (PP - 1) micro-batch times, divided by the chunks when interleaved.
TEST(PipelineSchedule, FreeTransfersGiveTheTextbookBubble) {
  for (long p : {2, 4, 8})
    for (long v : {1, 2, 4})
      for (long groups : {1, 2, 8}) {
        const PipelineShape s{p, v, p * groups};
        const double f = 1.0 / static_cast<double>(v);
        const double b = 2.3 / static_cast<double>(v);
        const double expected =
            static_cast<double>(s.micro_batches * v) * (f + b) + static_cast<double>(p - 1) * (f + b);
        EXPECT_NEAR(makespan(s, f, b, 0.0), expected, 1e-9 * expected) << p << " stages " << v << " chunks";
      }
}

// The closed form is the graph's own critical path: equal to it for uniform stages and fixed
// transfer times, over stages, chunks, micro-batches, backward/forward ratios and transfer
// times from negligible to as long as a chunk's forward and backward, with blocking sends and
// (interleaved) with sends posted ahead.
TEST(PipelineSchedule, ClosedFormIsTheGraphsCriticalPath) {
  for (bool overlap : {false, true})
    for (long p : {2, 3, 4, 8})
      for (long v : {1, 2, 3})
        for (long groups : {1, 2, 4})
          for (double ratio : {1.0, 2.0, 3.0})
            for (double c : {0.001, 0.1, 0.3, 1.0}) {
              if (overlap && v == 1) continue;  // Megatron overlaps only the interleaved schedule
              const PipelineShape s{p, v, p * groups, overlap};
              const double f = 1.0 / static_cast<double>(v);
              const double b = ratio * f;
              const double transfer = c * (f + b);
              const PipelineCost cost = pipeline_closed_form(s, f, b, transfer);
              const double closed =
                  static_cast<double>(s.micro_batches * v) * (f + b) + cost.bubble_s + cost.transfers_s;
              const double graph = makespan(s, f, b, transfer);
              EXPECT_NEAR(closed, graph, 1e-9 * graph)
                  << p << " stages, " << v << " chunks, " << s.micro_batches << " micro-batches, b/f " << ratio
                  << ", transfer " << c << " x (f + b)" << (overlap ? ", overlapped" : "");
            }
}

// Posted ahead, the interleaved schedule's sends hide under the compute: only the first
// micro-batch's way through every virtual stage and back waits for them, 2 x chunks x stages -
// 2 sends, until a send outlasts a chunk's forward.
TEST(PipelineSchedule, OverlappedSendsHideUnderTheCompute) {
  const double f = 0.5;
  const double b = 1.0;
  for (double c : {0.05, 0.5}) {
    const PipelineShape blocking{4, 2, 16, false};
    const PipelineShape overlapped{4, 2, 16, true};
    const double compute = 16 * 2 * (f + b) + 3 * (f + b);
    EXPECT_NEAR(makespan(overlapped, f, b, c), compute + (2 * 2 * 4 - 2) * c, 1e-9);
    EXPECT_LT(makespan(overlapped, f, b, c), makespan(blocking, f, b, c));
  }
  // A send slower than a chunk's forward throttles the steady state.
  EXPECT_GT(makespan({4, 2, 16, true}, f, b, 2.0), 16 * 2 * (f + b) + 3 * (f + b) + 14 * 2.0);
}

// A slower transfer lengthens the step by the transfers on the critical path, and interleaving
// pays more of them (one per chunk) for its smaller bubble: with slow enough transfers it
// loses, as Megatron's documentation warns.
TEST(PipelineSchedule, InterleavingTradesBubbleForTransfers) {
  const double per_micro = 3.0;  // forward + backward of a whole stage
  auto step = [&](long v, double c) {
    return makespan({4, v, 16}, 1.0 / static_cast<double>(v), 2.0 / static_cast<double>(v), c);
  };
  EXPECT_LT(step(4, 0.0), step(1, 0.0));
  EXPECT_NEAR(step(1, 0.0) - step(4, 0.0), 3 * per_micro * (1 - 1.0 / 4), 1e-9);
  EXPECT_GT(step(4, 0.5), step(1, 0.5));
}

// The graph's transfers can be flows on real links: two sends that share a link take longer
// together than apart, and the timeline names each stage's track.
TEST(PipelineSchedule, TransfersAreFlowsThatShareLinks) {
  const std::vector<double> capacity{1.0};  // one link, 1 byte per second
  const sim::LinkId link = 0;
  const AddTransfer over_link = [&](sim::TaskGraph& g, long, long, bool) {
    const auto id = g.add_flow(std::span(&link, 1), Bytes(0.1), Seconds(0));
    return PlacedTransfer{id, id};
  };
  const PipelineShape s{4, 1, 8};
  const auto g = build_pipeline(s, 1.0, 2.0, over_link);
  const auto t = run_pipeline(g, capacity, true);
  // Alone each takes 0.1 s; on the one link, sends in the same call of different stages meet.
  EXPECT_GT(t.makespan_s, makespan(s, 1.0, 2.0, 0.1) + 1e-6);
  std::set<std::string> tracks;
  for (const auto& e : t.events) tracks.insert(e.track);
  EXPECT_TRUE(tracks.count("pipeline stage 0"));
  EXPECT_TRUE(tracks.count("pipeline stage 3"));
  EXPECT_TRUE(tracks.count("stage 0 -> 1 sends"));
  EXPECT_FALSE(tracks.count("stage 3 -> 0 sends"));  // no chunks to hand back without interleaving
}

}  // namespace
}  // namespace gf::work
