// A race candidate is (key, index): the better has the larger key, then the smaller index (no
// candidate: key −inf, index 0xffffffff). Shared by the race stage (race.glsl) and the teams'
// merge of candidates (team_reduce.glsl).
#ifndef ATTNBENCH_RACE_CANDIDATE_GLSL
#define ATTNBENCH_RACE_CANDIDATE_GLSL

bool race_better(float key_a, uint idx_a, float key_b, uint idx_b) {
  return key_a > key_b || (key_a == key_b && idx_a < idx_b);
}

#endif
