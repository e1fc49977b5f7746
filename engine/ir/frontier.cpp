#include "engine/ir/frontier.hpp"

namespace cclab {

RankFrontier::RankFrontier(const Program& program, int channels)
    : ops_(program.ops.size()),
      next_(static_cast<std::size_t>(channels), 0),
      channel_end_(static_cast<std::size_t>(channels), 0),
      dependents_(dependents_of(program)) {
  // Counting sort of the ops by channel keeps program order inside each channel, in one flat array.
  for (const Op& op : program.ops)
    ++channel_end_[op.channel];
  std::uint32_t begin = 0;
  for (int c = 0; c < channels; ++c) {
    const std::uint32_t n = channel_end_[c];
    next_[c] = begin;
    channel_end_[c] = begin;  // the fill cursor until the loop below is done
    begin += n;
  }
  channel_ops_.resize(program.ops.size());
  for (OpId i = 0; i < program.ops.size(); ++i) {
    const Op& op = program.ops[i];
    channel_ops_[channel_end_[op.channel]++] = i;
    ops_[i] = {op.deps_count, State::Idle, op.channel};
  }
  // Channel 0 first: the order in which a fresh rank starts its channels.
  for (int c = channels - 1; c >= 0; --c)
    pending_.push_back(c);
}

bool RankFrontier::complete(OpId op) {
  ops_[op].state = State::Done;
  ++done_;
  bool woke = false;
  for (const OpId j : dependents_.of(op)) {
    if (--ops_[j].waiting == 0) {
      pending_.push_back(ops_[j].channel);
      woke = true;
    }
  }
  return woke;
}

std::optional<OpId> RankFrontier::first_unfinished() const {
  for (OpId i : channel_ops_)
    if (ops_[i].state != State::Done) return i;
  return std::nullopt;
}

Chunk resolve_aliasing(const CollectiveSpec& spec, int rank, bool in_place, const Chunk& chunk) {
  if (chunk.buffer == Buffer::Scratch || !in_place) return chunk;
  std::uint64_t shift = 0;
  if (output_is_block(spec.collective) && chunk.buffer == Buffer::Output) shift = in_place_offset(spec, rank);
  if (input_is_block(spec.collective) && chunk.buffer == Buffer::Input) shift = in_place_offset(spec, rank);
  return Chunk{Buffer::Output, chunk.offset + shift, chunk.count};
}

}  // namespace cclab
