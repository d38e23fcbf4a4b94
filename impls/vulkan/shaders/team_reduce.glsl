// Reductions over a team of TEAM lanes, whatever the subgroup size.
//
// The including shader defines, before this file:
//   TEAM  lanes per team, a power of two
//   WIDE  true: the team is the whole workgroup (subgroup arithmetic, then shared memory across
//         subgroups); false: TEAM divides the smallest subgroup size, so a team is TEAM
//         consecutive lanes of one subgroup and reduces with shuffles (no barrier)
// Lanes are numbered vl = gl_SubgroupID·gl_SubgroupSize + gl_SubgroupInvocationID (full
// subgroups are required where the device allows, see runtime/pipelines.h), so team t is
// lanes [t·TEAM, (t + 1)·TEAM) and a narrow team never spans two subgroups.
//
// Every result is a selection (max, min, or) or an integer sum, so each lane of the team gets
// the same bits and nothing depends on the order lanes combine in. In WIDE mode the whole
// workgroup must call these together (barriers). team_best merges race candidates (race.glsl).
#ifndef ATTNBENCH_TEAM_REDUCE_GLSL
#define ATTNBENCH_TEAM_REDUCE_GLSL

#include "race_candidate.glsl"

// Enough for a subgroup size of 1, the smallest a device may report.
shared float team_sh_key[gl_WorkGroupSize.x];
shared uint team_sh_word[gl_WorkGroupSize.x];

uint team_lane() { return (gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID) % TEAM; }
uint team_of_lane() { return (gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID) / TEAM; }

// Combines each subgroup's value across the workgroup (WIDE mode): op 0 add, 1 min, 2 max.
uint team_combine_subgroups(uint v, uint op) {
  if (subgroupElect()) team_sh_word[gl_SubgroupID] = v;
  barrier();
  uint r = team_sh_word[0];
  for (uint s = 1u; s < gl_NumSubgroups; ++s) {
    const uint x = team_sh_word[s];
    r = op == 0u ? r + x : (op == 1u ? min(r, x) : max(r, x));
  }
  barrier();
  return r;
}

uint team_add(uint v) {
  if (WIDE) return team_combine_subgroups(subgroupAdd(v), 0u);
  for (uint o = 1u; o < TEAM; o <<= 1u) v += subgroupShuffleXor(v, o);
  return v;
}

uint team_min(uint v) {
  if (WIDE) return team_combine_subgroups(subgroupMin(v), 1u);
  for (uint o = 1u; o < TEAM; o <<= 1u) v = min(v, subgroupShuffleXor(v, o));
  return v;
}

uint team_max(uint v) {
  if (WIDE) return team_combine_subgroups(subgroupMax(v), 2u);
  for (uint o = 1u; o < TEAM; o <<= 1u) v = max(v, subgroupShuffleXor(v, o));
  return v;
}

// The best race candidate of the team (race_better), on every lane.
void team_best(inout float key, inout uint idx) {
  if (WIDE) {
    const float mk = subgroupMax(key);
    const uint mi = subgroupMin(key == mk ? idx : 0xffffffffu);
    if (subgroupElect()) {
      team_sh_key[gl_SubgroupID] = mk;
      team_sh_word[gl_SubgroupID] = mi;
    }
    barrier();
    key = team_sh_key[0];
    idx = team_sh_word[0];
    for (uint s = 1u; s < gl_NumSubgroups; ++s)
      if (race_better(team_sh_key[s], team_sh_word[s], key, idx)) {
        key = team_sh_key[s];
        idx = team_sh_word[s];
      }
    barrier();
    return;
  }
  for (uint o = 1u; o < TEAM; o <<= 1u) {
    const float k2 = subgroupShuffleXor(key, o);
    const uint i2 = subgroupShuffleXor(idx, o);
    if (race_better(k2, i2, key, idx)) {
      key = k2;
      idx = i2;
    }
  }
}

#endif
