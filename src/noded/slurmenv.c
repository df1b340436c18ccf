/* Slurm's names for what a job and a step get in their environment (SlurmEnvironment =
 * yes, the default): scripts written for Slurm read SLURM_JOB_ID, SLURM_JOB_NODELIST,
 * SLURM_NNODES, SLURM_PROCID... and find them, beside Ductile's own DUCTILE_* variables
 * (docs/slurm-users.md, "Inside a job"). */
#include <stdio.h>
#include <string.h>

#include "noded.h"

int slurmenv_job(const noded_t *d, const json_t *msg, int64_t id, char *const *base,
                 char kv[][HOSTS_KV_LEN])
{
    if (!d->cfg.slurm_env)
        return 0;
    const char *nl = json_string_value(json_object_get(msg, "nodelist"));
    const char *cwd = json_string_value(json_object_get(msg, "cwd"));
    const char *name = json_string_value(json_object_get(msg, "name"));
    long long nn = (long long)json_integer_value(json_object_get(msg, "num_nodes"));
    int cores = d->cfg.cores_per_node;
    int n = 0;
    snprintf(kv[n++], HOSTS_KV_LEN, "SLURM_JOB_ID=%lld", (long long)id);
    snprintf(kv[n++], HOSTS_KV_LEN, "SLURM_JOBID=%lld", (long long)id);
    snprintf(kv[n++], HOSTS_KV_LEN, "SLURM_JOB_NAME=%s", name ? name : "");
    snprintf(kv[n++], HOSTS_KV_LEN, "SLURM_JOB_NODELIST=%s", nl ? nl : "");
    snprintf(kv[n++], HOSTS_KV_LEN, "SLURM_NODELIST=%s", nl ? nl : "");
    snprintf(kv[n++], HOSTS_KV_LEN, "SLURM_JOB_NUM_NODES=%lld", nn);
    snprintf(kv[n++], HOSTS_KV_LEN, "SLURM_NNODES=%lld", nn);
    snprintf(kv[n++], HOSTS_KV_LEN, "SLURM_SUBMIT_DIR=%s", cwd ? cwd : "/");
    snprintf(kv[n++], HOSTS_KV_LEN, "SLURM_CLUSTER_NAME=%s", d->cfg.cluster_name);
    snprintf(kv[n++], HOSTS_KV_LEN, "SLURMD_NODENAME=%s", d->name);
    snprintf(kv[n++], HOSTS_KV_LEN, "SLURM_NODEID=0"); /* the batch script's node: the first */
    snprintf(kv[n++], HOSTS_KV_LEN, "SLURM_CPUS_ON_NODE=%d", cores);
    if (nn > 1)
        snprintf(kv[n++], HOSTS_KV_LEN, "SLURM_JOB_CPUS_PER_NODE=%d(x%lld)", cores, nn);
    else
        snprintf(kv[n++], HOSTS_KV_LEN, "SLURM_JOB_CPUS_PER_NODE=%d", cores);
    int um = noded_umask(msg);
    if (um >= 0) /* as sbatch records it: four octal digits */
        snprintf(kv[n++], HOSTS_KV_LEN, "SLURM_UMASK=%04o", (unsigned)um);
    const json_t *arr = json_object_get(msg, "array"); /* [array id, index] */
    if (json_array_size(arr) == 2) {
        snprintf(kv[n++], HOSTS_KV_LEN, "SLURM_ARRAY_JOB_ID=%lld",
                 (long long)json_integer_value(json_array_get(arr, 0)));
        snprintf(kv[n++], HOSTS_KV_LEN, "SLURM_ARRAY_TASK_ID=%lld",
                 (long long)json_integer_value(json_array_get(arr, 1)));
    }
    /* With SLURM_JOBID set, Open MPI's mpirun would take the allocation from Slurm's
     * variables and start its daemons with srun: it is to use the job's host file and
     * `ductile rsh` (hosts.c), unless the user chose otherwise. */
    if (!hosts_env_get(base, "OMPI_MCA_plm"))
        snprintf(kv[n++], HOSTS_KV_LEN, "OMPI_MCA_plm=rsh");
    if (!hosts_env_get(base, "OMPI_MCA_ras"))
        snprintf(kv[n++], HOSTS_KV_LEN, "OMPI_MCA_ras=^slurm");
    return n;
}

int slurmenv_step(const noded_t *d, int64_t job, int step, int rank, int umask,
                  char kv[][SLURMENV_STEP_LEN])
{
    if (!d->cfg.slurm_env)
        return 0;
    int n = 0;
    snprintf(kv[n++], SLURMENV_STEP_LEN, "SLURM_JOB_ID=%lld", (long long)job);
    snprintf(kv[n++], SLURMENV_STEP_LEN, "SLURM_JOBID=%lld", (long long)job);
    /* Slurm counts a job's steps from 0 (history shows step 1 as 12.0) */
    snprintf(kv[n++], SLURMENV_STEP_LEN, "SLURM_STEP_ID=%d", step - 1);
    snprintf(kv[n++], SLURMENV_STEP_LEN, "SLURM_STEPID=%d", step - 1);
    snprintf(kv[n++], SLURMENV_STEP_LEN, "SLURM_PROCID=%d", rank);
    snprintf(kv[n++], SLURMENV_STEP_LEN, "SLURMD_NODENAME=%s", d->name);
    if (umask >= 0)
        snprintf(kv[n++], SLURMENV_STEP_LEN, "SLURM_UMASK=%04o", (unsigned)umask);
    return n;
}
