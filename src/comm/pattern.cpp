#include "comm/pattern.hpp"

#include "comm/algorithm.hpp"
#include "comm/algorithms/emitter.hpp"

namespace gf::comm {

int phases(Op op, Algo algo) { return algorithm(algo).phases(op); }

long representative_node(const Communicator& c, Algo algo) { return algorithm(algo).representative_node(c); }

int channels(const Communicator& c, Algo algo) { return algorithm(algo).channels(c); }

void emit_pattern(const Communicator& c, Op op, Algo algo, double size, double inflate, PatternScope scope,
                  const FlowSink& sink) {
  // A chain of two ranks (broadcast, reduce) has each GPU only sending or only receiving.
  const bool simplex = (op == Op::broadcast || op == Op::reduce) && c.ranks() == 2;
  Emitter e(c, inflate, scope, sink, simplex);
  // Point-to-point operations send the same flows whatever algorithm was asked for.
  algorithm(is_point_to_point(op) ? Algo::p2p : algo).emit(c, op, size, scope, e);
}

}  // namespace gf::comm
