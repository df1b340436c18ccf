/* Job management policies of seed 000 §5.3.1 / seed 002 §4.2.1, shared by FPSMA and
 * EGS (Algorithm 1 of both seeds, with the corrections listed in docs/policies.md):
 *   - jobs start in strict priority order at their requested size (no backfilling);
 *   - no new resize decision while any job is resizing;
 *   - PWMA: if the first waiting job does not fit, shrink running malleable jobs to
 *     make room, all or nothing; if that fails, grow with the idle nodes instead;
 *   - PRMA: never shrink; grow running malleable jobs with idle nodes.
 * Shrinks are issued before expands. */
#include "policies.h"

void jmp_pass(sched_t *s, const mm_ops_t *mm, bool pwma)
{
    sjob_t *head = core_pass_fcfs(s, false);
    int n = core_begin_resizes(s);
    if (n == 0)
        return;
    double guard = s->params[0];
    int max_expand = (int)s->params[1];
    if (pwma && head) {
        int need = core_room_need(s, head, false);
        if (need > 0 && mm->shrink(s, n, need, guard) <= 0 && core_make_room(s, n, head, false))
            return;
    }
    if (s->nfree == 0)
        return;
    mm->grow(s, n, guard, max_expand);
    core_apply_targets(s, n, SCHED_R_IDLE_NODES, SCHED_R_MAKE_ROOM, -1);
}
