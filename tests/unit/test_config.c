/* config: ductile.conf parsing, defaults, errors and path resolution. */
#include "testutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "common/hostlist.h"

#define ORIGIN "/etc/ductile/ductile.conf"

static config_t parse_ok(const char *text)
{
    config_t c;
    char err[512] = "";
    int rc = config_parse_string(text, ORIGIN, &c, err, sizeof(err));
    if (rc != 0)
        fail_msg("parse failed (%d): %s\n--- text:\n%s", rc, err, text);
    return c;
}

/* Parsing fails with -EINVAL, leaves the struct empty, and the message contains
 * every non-NULL fragment. */
static void parse_err(const char *text, const char *f1, const char *f2, const char *f3)
{
    config_t c;
    memset(&c, 0x5a, sizeof(c));
    char err[512] = "";
    int rc = config_parse_string(text, "t.conf", &c, err, sizeof(err));
    if (rc != -EINVAL)
        fail_msg("parse gave %d, want -EINVAL (%s)\n--- text:\n%s", rc, err, text);
    const char *frags[] = {f1, f2, f3};
    for (int i = 0; i < 3; i++)
        if (frags[i] && !strstr(err, frags[i]))
            fail_msg("message '%s' lacks '%s'\n--- text:\n%s", err, frags[i], text);
    assert_null(c.nodes);
    assert_null(c.cluster_name);
    assert_null(c.node_index);
    assert_int_equal(c.nnodes, 0);
    config_free(&c); /* harmless on a failed parse */
}

static void defaults(void **state)
{
    (void)state;
    config_t c = parse_ok("Nodes = n[1-4]\n");
    assert_string_equal(c.cluster_name, "ductile");
    assert_string_equal(c.control_addr, "127.0.0.1");
    assert_int_equal(c.control_port, 6817);
    assert_string_equal(c.control_socket, "/var/lib/ductile/ctld.sock");
    assert_int_equal(c.nnodes, 4);
    assert_string_equal(c.nodes[0], "n1");
    assert_string_equal(c.nodes[3], "n4");
    assert_non_null(c.node_addr);
    for (int i = 0; i < c.nnodes; i++)
        assert_null(c.node_addr[i]);
    assert_int_equal(c.cores_per_node, 1);
    assert_int_equal(c.memory_per_node, 1024);
    assert_string_equal(c.state_dir, "/var/lib/ductile");
    assert_string_equal(c.log_dir, "/var/lib/ductile");
    assert_string_equal(c.policy, "easy");
    assert_true(c.scheduler_tick == 10.0);
    assert_true(c.node_timeout == 30.0);
    assert_true(c.heartbeat_interval == 10.0);
    assert_true(c.resize_timeout == 60.0);
    assert_true(c.operator_resize_hold == 3600.0);
    assert_true(c.resize_backoff == 10.0);
    assert_true(c.resize_backoff_max == 300.0);
    assert_true(c.kill_wait == 10.0);
    assert_true(c.step_output_wait == 10.0);
    assert_int_equal(c.auth_type, CONFIG_AUTH_KEY);
    assert_string_equal(c.auth_key_file, "/var/lib/ductile/cluster.key");
    assert_string_equal(c.munge_socket, "");
    assert_int_equal(c.noperators, 0);
    assert_int_equal(c.max_jobs, 1000000);
    assert_int_equal(c.max_jobs_per_user, 10000); /* every user's share out of the box */
    assert_int_equal(c.max_submit_rate, 20);
    assert_int_equal(c.max_requeue, 5);
    assert_int_equal(c.max_procs_per_job, 4096);
    assert_int_equal(c.max_script_size, 1048576);
    assert_int_equal(c.max_connections, 4096);
    assert_int_equal(c.reserved_connections, 32);
    assert_int_equal(c.max_connections_per_user, 64);
    assert_int_equal(c.max_connections_per_host, 128);
    assert_int_equal(c.max_unauth_connections, 1024); /* a quarter of MaxConnections */
    assert_true(c.auth_timeout == 10.0);
    assert_true(c.frame_timeout == 30.0);
    assert_true(c.idle_timeout == 600.0);
    assert_true(config_is_operator(&c, "root"));
    assert_false(config_is_operator(&c, "alice"));
    assert_false(config_is_operator(&c, NULL));
    config_free(&c);
    assert_null(c.nodes);
    config_free(&c); /* twice is harmless */
    config_free(NULL);
}

static void every_key(void **state)
{
    (void)state;
    config_t c = parse_ok("# a full file\n"
                          "\n"
                          "ClusterName = prod-1\n"
                          "ControlAddr = ctl.example.org   # the head node\n"
                          "ControlPort = 7000\n"
                          "ControlSocket = /run/ductile/ctld.sock\n"
                          "Nodes = login, n[01-03]\n"
                          "CoresPerNode = 64\n"
                          "MemoryPerNode = 257000\n"
                          "StateDir = /srv/ductile\n"
                          "LogDir = /var/log/ductile\n"
                          "Policy = malleable-easy\n"
                          "SchedulerTick = 0.5\n"
                          "NodeTimeout = 60\n"
                          "HeartbeatInterval = 5\n"
                          "ResizeTimeout = 120\n"
                          "OperatorResizeHold = 0\n"
                          "ResizeBackoff = 2\n"
                          "ResizeBackoffMax = 40\n"
                          "KillWait = 0\n"
                          "StepOutputWait = 2.5\n"
                          "AuthType = munge\n"
                          "AuthKeyFile = /etc/ductile/key\n"
                          "MungeSocket = /run/munge/munge.socket.2\n"
                          "Operators = alice, bob\n"
                          "MaxJobs = 5000\n"
                          "MaxRequeue = 0\n"
                          "MaxProcessesPerJob = 0\n"
                          "MaxScriptSize = 1024\n"
                          "NodeAddr = n01=10.0.0.1, n03 = host3:7001\n"
                          "MaxConnections = 1000\n"
                          "ReservedConnections = 0\n"
                          "MaxConnectionsPerUser = 0\n"
                          "MaxConnectionsPerHost = 16\n"
                          "AuthTimeout = 2.5\n"
                          "FrameTimeout = 0\n"
                          "IdleTimeout = 0\n");
    assert_string_equal(c.cluster_name, "prod-1");
    assert_string_equal(c.control_addr, "ctl.example.org");
    assert_int_equal(c.control_port, 7000);
    assert_string_equal(c.control_socket, "/run/ductile/ctld.sock");
    assert_int_equal(c.nnodes, 4);
    assert_string_equal(c.nodes[0], "login");
    assert_string_equal(c.nodes[1], "n01");
    assert_int_equal(c.cores_per_node, 64);
    assert_int_equal(c.memory_per_node, 257000);
    assert_string_equal(c.state_dir, "/srv/ductile");
    assert_string_equal(c.log_dir, "/var/log/ductile");
    assert_string_equal(c.policy, "malleable-easy");
    assert_true(c.scheduler_tick == 0.5);
    assert_true(c.node_timeout == 60.0);
    assert_true(c.heartbeat_interval == 5.0);
    assert_true(c.resize_timeout == 120.0);
    assert_true(c.operator_resize_hold == 0.0);
    assert_true(c.resize_backoff == 2.0);
    assert_true(c.resize_backoff_max == 40.0);
    assert_true(c.kill_wait == 0.0);
    assert_true(c.step_output_wait == 2.5);
    assert_int_equal(c.auth_type, CONFIG_AUTH_MUNGE);
    assert_string_equal(c.auth_key_file, "/etc/ductile/key");
    assert_string_equal(c.munge_socket, "/run/munge/munge.socket.2");
    assert_int_equal(c.noperators, 2);
    assert_string_equal(c.operators[0], "alice");
    assert_string_equal(c.operators[1], "bob");
    assert_true(config_is_operator(&c, "bob"));
    assert_false(config_is_operator(&c, "carol"));
    assert_int_equal(c.max_jobs, 5000);
    assert_int_equal(c.max_requeue, 0);
    assert_int_equal(c.max_procs_per_job, 0);
    assert_int_equal(c.max_script_size, 1024);
    assert_null(c.node_addr[0]);
    assert_string_equal(c.node_addr[1], "10.0.0.1");
    assert_null(c.node_addr[2]);
    assert_string_equal(c.node_addr[3], "host3:7001");
    assert_int_equal(c.max_connections, 1000);
    assert_int_equal(c.reserved_connections, 0);
    assert_int_equal(c.max_connections_per_user, 0);
    assert_int_equal(c.max_connections_per_host, 16);
    assert_int_equal(c.max_unauth_connections, 250); /* a quarter of the 1000 given */
    assert_true(c.auth_timeout == 2.5);
    assert_true(c.frame_timeout == 0.0);
    assert_true(c.idle_timeout == 0.0);
    config_free(&c);
}

static void syntax(void **state)
{
    (void)state;
    /* keys in any case, blanks anywhere around, CRLF line ends, comments */
    config_t c = parse_ok("  nodes=a,b   \r\n"
                          "CLUSTERNAME\t=\tx   # trailing comment\r\n"
                          "   # indented comment\n"
                          "controlport = 1\n"
                          "cOnTrOlAdDr = 10.1.2.3\n"
                          "policy = \"fcfs # not a comment\"   # but this is\n"
                          "logdir = \"/a \\\"quoted\\\" \\\\ dir\"\n"
                          "MungeSocket = \"\"\n"
                          "AuthType = KEY\n"
                          "maxjobs = \"12\"");
    assert_int_equal(c.nnodes, 2);
    assert_string_equal(c.cluster_name, "x");
    assert_int_equal(c.control_port, 1);
    assert_string_equal(c.control_addr, "10.1.2.3");
    assert_string_equal(c.policy, "fcfs # not a comment");
    assert_string_equal(c.log_dir, "/a \"quoted\" \\ dir");
    assert_string_equal(c.munge_socket, "");
    assert_int_equal(c.auth_type, CONFIG_AUTH_KEY);
    assert_int_equal(c.max_jobs, 12);
    config_free(&c);
    /* '#' and '=' in a quoted value; '=' in a bare value after the first */
    c = parse_ok("Nodes = n1\nPolicy = \"a=b#c\"\nClusterName = \"q\"#x\n");
    assert_string_equal(c.policy, "a=b#c");
    assert_string_equal(c.cluster_name, "q");
    config_free(&c);
    c = parse_ok("Nodes = n1\nPolicy = a=b\n");
    assert_string_equal(c.policy, "a=b");
    config_free(&c);
}

static void derived_defaults(void **state)
{
    (void)state;
    config_t c = parse_ok("Nodes = n1\nStateDir = /srv/d/\nNodeTimeout = 12\n");
    assert_string_equal(c.state_dir, "/srv/d");
    assert_string_equal(c.log_dir, "/srv/d");
    assert_string_equal(c.control_socket, "/srv/d/ctld.sock");
    assert_string_equal(c.auth_key_file, "/srv/d/cluster.key");
    assert_true(c.heartbeat_interval == 4.0);
    config_free(&c);
    /* keys that follow StateDir are not overridden when given */
    c = parse_ok("LogDir = /l\nStateDir = /s\nNodes = n1\n");
    assert_string_equal(c.log_dir, "/l");
    assert_string_equal(c.control_socket, "/s/ctld.sock");
    config_free(&c);
    c = parse_ok("Nodes = n1\nStateDir = /\n");
    assert_string_equal(c.control_socket, "/ctld.sock");
    config_free(&c);
}

static void errors_name_line(void **state)
{
    (void)state;
    parse_err("Nodes = n1\n\n# c\nFoo = 1\n", "t.conf:4: unknown key 'Foo'", NULL, NULL);
    parse_err("Nodes = n1\nControlPrt = 1\n", "t.conf:2:", "'ControlPrt'",
              "did you mean 'ControlPort'");
    parse_err("Nodes = n1\ncontrolport = 1\nControlPort = 2\n", "t.conf:3:",
              "ControlPort is given twice (first on line 2)", NULL);
    parse_err("nodes = n1\nNODES = n2\n", "t.conf:2:", "Nodes is given twice", NULL);
    parse_err("Nodes = n1\njust words\n", "t.conf:2:", "expected 'Key = Value'", NULL);
    parse_err("Nodes = n1\n= 5\n", "t.conf:2:", "no key", NULL);
    parse_err("Nodes = n1\nPolicy # = x\n", "t.conf:2:", "expected 'Key = Value'", NULL);
    parse_err("Nodes = n1\nPolicy =\n", "t.conf:2:", "Policy: no value", NULL);
    parse_err("Nodes = n1\nPolicy =   # only a comment\n", "t.conf:2:", "no value", NULL);
    parse_err("Nodes = n1\nPolicy = \"\"\n", "t.conf:2:", "Policy: the value is empty", NULL);
    parse_err("Nodes = n1\nPolicy = \"abc\n", "t.conf:2:", "missing closing", NULL);
    parse_err("Nodes = n1\nPolicy = \"abc\" x\n", "t.conf:2:", "after the closing", NULL);
    parse_err("Nodes = n1\nClusterName = my cluster\n", "t.conf:2:", "ClusterName:",
              "'my cluster' is not a valid name");
    parse_err("Nodes = n1\nControlAddr = \"a b\"\n", "t.conf:2:", "ControlAddr:", NULL);
    parse_err("Nodes = n1\nAuthType = kerberos\n", "t.conf:2:", "AuthType:",
              "accepted: key, munge");
    parse_err("Nodes = n1\nStateDir = \"\"\n", "t.conf:2:", "StateDir: the path is empty", NULL);
}

static void range_errors(void **state)
{
    (void)state;
    parse_err("Nodes = n1\nControlPort = 0\n", "t.conf:2:", "ControlPort: 0 is out of range",
              "accepted: 1..65535");
    parse_err("Nodes = n1\nControlPort = 65536\n", "t.conf:2:", "accepted: 1..65535", NULL);
    parse_err("Nodes = n1\nControlPort = 99999999999999999999999\n", "out of range", NULL, NULL);
    parse_err("Nodes = n1\nControlPort = http\n", "t.conf:2:",
              "ControlPort: 'http' is not an integer", "accepted: 1..65535");
    parse_err("Nodes = n1\nControlPort = 12abc\n", "not an integer", NULL, NULL);
    parse_err("Nodes = n1\nControlPort = 1.5\n", "not an integer", NULL, NULL);
    parse_err("Nodes = n1\nCoresPerNode = 0\n", "t.conf:2:", "CoresPerNode", "accepted: 1..");
    parse_err("Nodes = n1\nCoresPerNode = -4\n", "CoresPerNode: -4 is out of range", NULL, NULL);
    parse_err("Nodes = n1\nMemoryPerNode = 0\n", "MemoryPerNode", "accepted: 1..", NULL);
    parse_err("Nodes = n1\nMaxJobs = 0\n", "MaxJobs", "accepted: 1..2147483647", NULL);
    parse_err("Nodes = n1\nMaxJobs = 2147483648\n", "MaxJobs", "out of range", NULL);
    parse_err("Nodes = n1\nMaxRequeue = -1\n", "MaxRequeue", "accepted: 0..1000000", NULL);
    parse_err("Nodes = n1\nMaxProcessesPerJob = -1\n", "MaxProcessesPerJob",
              "accepted: 0..4194304", NULL);
    parse_err("Nodes = n1\nMaxProcessesPerJob = 4194305\n", "MaxProcessesPerJob",
              "out of range", NULL);
    parse_err("Nodes = n1\nMaxScriptSize = 1023\n", "t.conf:2:", "MaxScriptSize",
              "accepted: 1024..16777216");
    parse_err("Nodes = n1\nMaxScriptSize = 16777217\n", "accepted: 1024..16777216", NULL, NULL);
    parse_err("Nodes = n1\nSchedulerTick = 0\n", "t.conf:2:", "SchedulerTick: 0 is out of range",
              "> 0");
    parse_err("Nodes = n1\nNodeTimeout = -1\n", "NodeTimeout", "out of range", NULL);
    parse_err("Nodes = n1\nResizeTimeout = soon\n", "ResizeTimeout: 'soon' is not a number",
              NULL, NULL);
    parse_err("Nodes = n1\nKillWait = -1\n", "KillWait", ">= 0", NULL);
    parse_err("Nodes = n1\nKillWait = inf\n", "KillWait", "not a number", NULL);
    parse_err("Nodes = n1\nKillWait = nan\n", "KillWait", "not a number", NULL);
    parse_err("Nodes = n1\nKillWait = 0x10\n", "KillWait", "not a number", NULL);
    parse_err("Nodes = n1\nKillWait = 1e400\n", "KillWait", "out of range", NULL);
    parse_err("Nodes = n1\nResizeTimeout = 31536001\n", "ResizeTimeout", "<= 31536000", NULL);
    /* the edges themselves are accepted */
    config_t c = parse_ok("Nodes = n1\nControlPort = 65535\nMaxScriptSize = 16777216\n"
                          "ResizeTimeout = 31536000\nKillWait = 0\nSchedulerTick = 0.001\n");
    assert_int_equal(c.control_port, 65535);
    assert_int_equal(c.max_script_size, 16777216);
    config_free(&c);
}

static void cross_key_errors(void **state)
{
    (void)state;
    parse_err("Nodes = n1\nNodeTimeout = 10\nHeartbeatInterval = 10\n", "t.conf:3:",
              "HeartbeatInterval: 10 must be less than NodeTimeout (10)", NULL);
    /* against the default NodeTimeout, and with the keys the other way round */
    parse_err("Nodes = n1\nHeartbeatInterval = 40\n", "t.conf:2:", "NodeTimeout (30)", NULL);
    parse_err("HeartbeatInterval = 20\nNodeTimeout = 15\nNodes = n1\n", "t.conf:1:",
              "HeartbeatInterval", NULL);
    parse_err("Nodes = n1\nMaxConnections = 40\nReservedConnections = 40\n", "t.conf:3:",
              "ReservedConnections: 40 must be less than MaxConnections (40)", NULL);
    parse_err("Nodes = n1\nMaxConnections = 20\n", "t.conf:2:",
              "ReservedConnections: 32 must be less than MaxConnections (20)", NULL);
    parse_err("Nodes = n1\nMaxConnections = 100\nMaxUnauthConnections = 90\n", "t.conf:3:",
              "MaxUnauthConnections: 90 is more than MaxConnections less ReservedConnections (68)",
              NULL);
    parse_err("Nodes = n1\nMaxUnauthConnections = 0\n", "t.conf:2:", "MaxUnauthConnections",
              NULL);
    parse_err("Nodes = n1\nIdleTimeout = 30\n", "t.conf:2:", "IdleTimeout: 30 s is too short",
              "at least 120 s");
    parse_err("Nodes = n1\nMaxConnections = 15\n", "t.conf:2:", "MaxConnections", NULL);
    parse_err("", "t.conf: Nodes is missing", NULL, NULL);
    parse_err("# only comments\nClusterName = x\n", "t.conf: Nodes is missing", NULL, NULL);
    parse_err("Nodes = \"\"\n", "t.conf:1:", "Nodes: no nodes listed", NULL);
    parse_err("Policy = x\nNodes = n[5-3]\n", "t.conf:2:", "Nodes: bad range '5-3' in 'n[5-3]'",
              NULL);
    parse_err("Nodes = n[1-3],n2\n", "t.conf:1:", "duplicate host 'n2'", NULL);
    parse_err("Nodes = n[1-9999999]\n", "t.conf:1:", "too many hosts", NULL);
    parse_err("Nodes = n1\nNodeAddr = n2=h\n", "t.conf:2:", "NodeAddr: 'n2' is not in Nodes",
              NULL);
    parse_err("Nodes = n1\nNodeAddr = n1=h,n1=g\n", "t.conf:2:", "'n1' is given twice", NULL);
    parse_err("Nodes = n1\nNodeAddr = n1\n", "t.conf:2:", "'n1' is not name=host", NULL);
    parse_err("Nodes = n1\nNodeAddr = n1=\n", "t.conf:2:", "not a host name", NULL);
    parse_err("Nodes = n1\nNodeAddr = n1=h,\n", "t.conf:2:", "not name=host", NULL);
    parse_err("NodeAddr = n1=h\nNodes = n1,n2\nOperators = a, -b\n", "t.conf:3:",
              "'-b' is not a user name", NULL);
    parse_err("Nodes = n1\nOperators = a,,b\n", "t.conf:2:", "'' is not a user name", NULL);
    parse_err("Nodes = n1\nOperators = a b\n", "'a b' is not a user name", NULL, NULL);
    parse_err("Nodes = n1\nOperators = a,b,a\n", "t.conf:2:", "'a' is listed twice", NULL);
    /* NodeAddr may come before Nodes */
    config_t c = parse_ok("NodeAddr = n2=h2\nNodes = n1,n2\nOperators = \"\"\n");
    assert_string_equal(c.node_addr[1], "h2");
    assert_int_equal(c.noperators, 0);
    config_free(&c);
}

/* CheckpointTransfer, CheckpointRegions: push and mr unless told */
static void checkpoint_transfer(void **state)
{
    (void)state;
    config_t c = parse_ok("Nodes = n[1-3]\n");
    assert_int_equal(c.ckpt_pull, 0);
    assert_int_equal(c.ckpt_shmr, 0);
    config_free(&c);
    c = parse_ok("Nodes = n[1-3]\nCheckpointTransfer = Pull\nCheckpointRegions = shmr\n");
    assert_int_equal(c.ckpt_pull, 1);
    assert_int_equal(c.ckpt_shmr, 1);
    config_free(&c);
    parse_err("Nodes = n[1-3]\nCheckpointTransfer = both\n", "t.conf:2:",
              "CheckpointTransfer: 'both' is not accepted (accepted: push (the processes write "
              "into the checkpoint agents' memory)", "pull (the agents read the processes' memory)");
    parse_err("Nodes = n[1-3]\nCheckpointRegions = node\n", "t.conf:2:",
              "CheckpointRegions: 'node' is not accepted (accepted: mr (",
              "shmr (one shared-memory region and endpoint per node)");
}

/* CheckpointNodes: some of Nodes, in any order of the lines; never all of them */
/* Partition lines (src/common/partition.c): one per partition, Slurm's words. */
static void partitions(void **state)
{
    (void)state;
    config_t c = parse_ok("Nodes = n[1-4]\n"
                          "Partition = debug Nodes=n[1-2] DefaultTime=10 MaxTime=1:00:00 "
                          "MaxNodes=2\n"
                          "partition = batch Nodes=ALL AllowAccounts=physics,chem PriorityTier=3 "
                          "State=drain PreemptMode=OFF Default=YES\n");
    assert_int_equal(c.npartitions, 2);
    const config_partition_t *d = partition_find(&c, "debug"), *b = partition_find(&c, "batch");
    assert_non_null(d);
    assert_non_null(b);
    assert_int_equal(d->nnodes, 2);
    assert_true(d->nodes[0] && d->nodes[1] && !d->nodes[2]);
    assert_true(d->default_time == 600 && d->max_time == 3600 && d->max_nodes == 2);
    assert_false(d->is_default);
    assert_true(b->is_default && b->nnodes == 4 && b->tier == 3 && !b->preempt);
    assert_int_equal(b->state, PART_DRAIN);
    assert_int_equal(b->naccounts, 2);
    assert_string_equal(b->accounts[1], "chem");
    config_free(&c);
    /* without Default=YES the first is the default */
    c = parse_ok("Nodes = n[1-2]\nPartition = a Nodes=n1\nPartition = b\n");
    assert_true(partition_find(&c, "a")->is_default);
    assert_int_equal(partition_find(&c, "b")->nnodes, 2);
    config_free(&c);
    parse_err("Nodes = n[1-2]\nPartition = a Nodes=n9\n", "t.conf:2", "n9 is not one of Nodes",
              NULL);
    parse_err("Nodes = n[1-2]\nPartition = a Colour=red\n", "'Colour' is not a partition setting",
              NULL, NULL);
    parse_err("Nodes = n[1-2]\nPartition = a MaxTime=soon\n", "MaxTime: 'soon' is not a time",
              NULL, NULL);
    parse_err("Nodes = n[1-2]\nPartition = a\nPartition = a\n", "t.conf:3",
              "Partition a is given twice", NULL);
    parse_err("Nodes = n[1-2]\nPartition = a DefaultTime=60 MaxTime=30\n", "t.conf:2",
              "DefaultTime is longer than MaxTime", NULL);
    parse_err("Nodes = n[1-2]\nPartition = a Default=YES\nPartition = b Default=YES\n",
              "but a is the default already", NULL, NULL);
    parse_err("Nodes = n[1-2]\nPartition = a State=open\n", "State: UP, DOWN, DRAIN or INACTIVE",
              NULL, NULL);
    parse_err("Nodes = n[1-2]\nPartition = Nodes=n1\n", "first its name", NULL, NULL);
    parse_err("Nodes = n[1-2]\nPartition = a PreemptMode=SUSPEND\n", "OFF or REQUEUE", NULL,
              NULL);
}

static void checkpoint_nodes(void **state)
{
    (void)state;
    config_t c = parse_ok("CheckpointNodes = c[1-2]\nNodes = n[1-3],c[1-2]\n");
    assert_false(c.ckpt_node[0] || c.ckpt_node[1] || c.ckpt_node[2]);
    assert_true(c.ckpt_node[3] && c.ckpt_node[4]);
    config_free(&c);
    c = parse_ok("Nodes = n[1-3]\n");
    assert_false(c.ckpt_node[0] || c.ckpt_node[1] || c.ckpt_node[2]);
    assert_true(c.agent_stop_wait == 120.0);
    assert_int_equal(c.agent_memory, 0); /* a quarter of each checkpoint node's memory */
    assert_false(c.agents_scale);         /* MA-RA */
    assert_int_equal(c.ckpt_lending, 0); /* none */
    config_free(&c);
    c = parse_ok("Nodes = n[1-3]\nCheckpointAgentStopWait = 2.5\nCheckpointAgentMemory = 4096\n"
                 "CheckpointMalleableAgents = ma-ma\n");
    assert_true(c.agent_stop_wait == 2.5);
    assert_int_equal(c.agent_memory, 4096);
    assert_true(c.agents_scale);
    config_free(&c);
    c = parse_ok("Nodes = n[1-3]\nCheckpointMalleableAgents = MA-RA\nCheckpointLending = Idle\n");
    assert_false(c.agents_scale);
    assert_int_equal(c.ckpt_lending, 1);
    config_free(&c);
    c = parse_ok("Nodes = n[1-3]\nCheckpointLending = shrink\n");
    assert_int_equal(c.ckpt_lending, 2);
    config_free(&c);
    parse_err("Nodes = n[1-3]\nCheckpointLending = high\n", "t.conf:2:",
              "CheckpointLending: 'high' is not accepted (accepted: none (",
              "shrink (and else a malleable job gives up nodes)");
    parse_err("Nodes = n[1-3]\nCheckpointMalleableAgents = scale\n", "t.conf:2:",
              "'scale' is not accepted (accepted: MA-RA (", "MA-MA (");
    /* Algorithm 6's choices: round-robin over every checkpoint node with room by default */
    c = parse_ok("Nodes = n[1-3]\n");
    assert_int_equal(c.ckpt_select, CONFIG_CKPT_SEL_MEMORY);
    assert_int_equal(c.ckpt_dist, CONFIG_CKPT_DIST_ROUNDROBIN);
    assert_int_equal(c.ckpt_candidates, 0);
    assert_true(c.reclaim_wait == 30);
    config_free(&c);
    c = parse_ok("Nodes = n[1-3]\nCheckpointPlacement = POWER\nCheckpointDistribution = fill\n"
                 "CheckpointCandidates = 2\nCheckpointReclaimWait = 0.5\n");
    assert_int_equal(c.ckpt_select, CONFIG_CKPT_SEL_POWER);
    assert_int_equal(c.ckpt_dist, CONFIG_CKPT_DIST_FILL);
    assert_int_equal(c.ckpt_candidates, 2);
    assert_true(c.reclaim_wait == 0.5);
    config_free(&c);
    c = parse_ok("Nodes = n[1-3]\nCheckpointDistribution = Block\n");
    assert_int_equal(c.ckpt_dist, CONFIG_CKPT_DIST_BLOCK);
    config_free(&c);
    c = parse_ok("Nodes = n[1-3]\nCheckpointPlacement = bandwidth\n");
    assert_int_equal(c.ckpt_select, CONFIG_CKPT_SEL_BANDWIDTH);
    config_free(&c);
    c = parse_ok("Nodes = n[1-3]\nCheckpointPlacement = Frequency\nCheckpointNodeMemory = 64\n"
                 "CheckpointScalerLower = 40\nCheckpointScalerUpper = 50\n");
    assert_int_equal(c.ckpt_select, CONFIG_CKPT_SEL_FREQUENCY);
    assert_int_equal(c.ckpt_node_memory, 64);
    assert_int_equal(c.scaler_lower, 40);
    assert_int_equal(c.scaler_upper, 50);
    config_free(&c);
    c = parse_ok("Nodes = n[1-3]\n");
    assert_int_equal(c.scaler_lower, 80);
    assert_int_equal(c.scaler_upper, 90);
    config_free(&c);
    parse_err("Nodes = n[1-3]\nCheckpointPlacement = traffic\n", "t.conf:2:",
              "CheckpointPlacement: 'traffic' is not accepted", "bandwidth (");
    parse_err("Nodes = n[1-3]\nCheckpointScalerLower = 95\n", "t.conf:2:",
              "CheckpointScalerLower: 95 % is above CheckpointScalerUpper (90 %)", NULL);
    parse_err("Nodes = n[1-3]\nCheckpointScalerUpper = 101\n", "t.conf:2:",
              "CheckpointScalerUpper: 101 is out of range", NULL);
    parse_err("Nodes = n[1-3]\nCheckpointDistribution = rr\n", "t.conf:2:",
              "'rr' is not accepted", "round-robin (one agent per node in turn)");
    parse_err("Nodes = n[1-3]\nCheckpointCandidates = -1\n", "t.conf:2:",
              "CheckpointCandidates: -1 is out of range", NULL);
    parse_err("Nodes = n[1-3]\nCheckpointAgentMemory = lots\n", "t.conf:2:", NULL, NULL);
    parse_err("Nodes = n[1-3]\nCheckpointAgentStopWait = -1\n", "t.conf:2:", NULL, NULL);
    parse_err("Nodes = n[1-3]\nCheckpointNodes = n4\n", "t.conf:2:",
              "CheckpointNodes: n4 is not one of Nodes", NULL);
    parse_err("Nodes = n[1-2]\nCheckpointNodes = n[1-2]\n", "t.conf:2:",
              "every node would hold checkpoints", NULL);
    parse_err("Nodes = n[1-2]\nCheckpointNodes = n[2-\n", "t.conf:2: CheckpointNodes:", NULL, NULL);
}

static void socket_path_limit(void **state)
{
    (void)state;
    char text[512], dir[200];
    memset(dir, 'd', 120);
    dir[0] = '/';
    dir[120] = '\0';
    snprintf(text, sizeof(text), "Nodes = n1\nStateDir = %s\n", dir);
    parse_err(text, "t.conf:2: StateDir:", "longer than 107 bytes", "set ControlSocket");
    snprintf(text, sizeof(text), "Nodes = n1\nStateDir = %s\nControlSocket = /run/c.sock\n", dir);
    config_t c = parse_ok(text);
    assert_string_equal(c.control_socket, "/run/c.sock");
    config_free(&c);
    snprintf(text, sizeof(text), "Nodes = n1\nControlSocket = %s/x\n", dir);
    parse_err(text, "t.conf:2: ControlSocket:", "longer than 107", NULL);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void relative_paths(void **state)
{
    (void)state;
    char *tmp = tu_tmpdir(), path[PATH_MAX], want[PATH_MAX + 32], err[512];
    snprintf(path, sizeof(path), "%s/ductile.conf", tmp);
    write_file(path, "Nodes = n1\n"
                     "StateDir = state\n"
                     "LogDir = ./logs/\n"
                     "AuthKeyFile = ../keys/k\n"
                     "MungeSocket = m.sock\n"
                     "ControlSocket = /run/abs.sock\n");
    config_t c;
    assert_int_equal(config_load(path, &c, err, sizeof(err)), 0);
    snprintf(want, sizeof(want), "%s/state", tmp);
    assert_string_equal(c.state_dir, want);
    snprintf(want, sizeof(want), "%s/logs", tmp);
    assert_string_equal(c.log_dir, want);
    snprintf(want, sizeof(want), "%s/../keys/k", tmp);
    assert_string_equal(c.auth_key_file, want);
    snprintf(want, sizeof(want), "%s/m.sock", tmp);
    assert_string_equal(c.munge_socket, want);
    assert_string_equal(c.control_socket, "/run/abs.sock");
    config_free(&c);

    /* a file named by a relative path still anchors at its own directory, as an
     * absolute path (daemons change directory) */
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(tmp), 0);
    mkdir("sub", 0700);
    write_file("sub/d.conf", "Nodes = n1\nStateDir = s\n");
    int rc = config_load("sub/d.conf", &c, err, sizeof(err));
    char here[PATH_MAX];
    assert_non_null(getcwd(here, sizeof(here)));
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(rc, 0);
    snprintf(want, sizeof(want), "%s/sub/s", here);
    assert_string_equal(c.state_dir, want);
    snprintf(want, sizeof(want), "%s/sub/s/ctld.sock", here);
    assert_string_equal(c.control_socket, want);
    config_free(&c);

    /* from a string: the directory part of origin, or none */
    assert_int_equal(config_parse_string("Nodes = n1\nStateDir = s\n", "/x/y.conf", &c, err,
                                         sizeof(err)), 0);
    assert_string_equal(c.state_dir, "/x/s");
    config_free(&c);
    assert_int_equal(config_parse_string("Nodes = n1\nStateDir = s\n", "y.conf", &c, err,
                                         sizeof(err)), 0);
    assert_string_equal(c.state_dir, "s");
    assert_string_equal(c.control_socket, "s/ctld.sock");
    config_free(&c);
    assert_int_equal(config_parse_string("Nodes = n1\nStateDir = s\n", NULL, &c, err,
                                         sizeof(err)), 0);
    assert_string_equal(c.state_dir, "s");
    config_free(&c);
    tu_rmtree(tmp);
    free(tmp);
}

static void load_errors(void **state)
{
    (void)state;
    char *tmp = tu_tmpdir(), path[PATH_MAX], err[512];
    config_t c;
    snprintf(path, sizeof(path), "%s/missing.conf", tmp);
    assert_int_equal(config_load(path, &c, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, path));
    assert_null(c.nodes);
    assert_int_equal(config_load(tmp, &c, err, sizeof(err)), -EISDIR);
    assert_int_equal(config_load("", &c, err, sizeof(err)), -EINVAL);
    /* errors from a file carry its name and the line */
    snprintf(path, sizeof(path), "%s/bad.conf", tmp);
    write_file(path, "Nodes = n1\n\nControlPort = 0\n");
    assert_int_equal(config_load(path, &c, err, sizeof(err)), -EINVAL);
    char want[PATH_MAX + 16];
    snprintf(want, sizeof(want), "%s:3: ControlPort", path);
    assert_non_null(strstr(err, want));
    /* a NUL byte is an error on its line, not the end of the file */
    FILE *f = fopen(path, "wb");
    fwrite("Nodes = n1\nPolicy = a\0b\n", 1, 24, f);
    fclose(f);
    assert_int_equal(config_load(path, &c, err, sizeof(err)), -EINVAL);
    snprintf(want, sizeof(want), "%s:2: NUL byte", path);
    assert_non_null(strstr(err, want));
    /* no room for a message is fine */
    assert_int_equal(config_load(path, &c, NULL, 0), -EINVAL);
    assert_int_equal(config_parse_string("Foo = 1", "x", &c, NULL, 0), -EINVAL);
    assert_int_equal(config_parse_string(NULL, "x", &c, err, sizeof(err)), -EINVAL);
    tu_rmtree(tmp);
    free(tmp);
}

static void node_lookup(void **state)
{
    (void)state;
    config_t c = parse_ok("Nodes = login,n[00000-11999],gpu[1-8]\n");
    assert_int_equal(c.nnodes, 12009);
    assert_int_equal(config_node_index(&c, "login"), 0);
    assert_int_equal(config_node_index(&c, "n00000"), 1);
    assert_int_equal(config_node_index(&c, "n11999"), 12000);
    assert_int_equal(config_node_index(&c, "gpu8"), 12008);
    assert_int_equal(config_node_index(&c, "gpu9"), -1);
    assert_int_equal(config_node_index(&c, "n0"), -1);
    assert_int_equal(config_node_index(&c, NULL), -1);
    for (int i = 0; i < c.nnodes; i++)
        assert_int_equal(config_node_index(&c, c.nodes[i]), i);
    config_free(&c);
    assert_int_equal(config_node_index(NULL, "x"), -1);
    assert_int_equal(config_node_index(&c, "x"), -1); /* after free */
}

/* The example in docs/configuration.md parses: the docs cannot drift from the code. */
static void doc_example(void **state)
{
    (void)state;
    const char *src = getenv("DUCTILE_SOURCE_DIR");
    if (!src)
        skip();
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/docs/configuration.md", src);
    char *doc = tu_slurp(path, NULL);
    assert_non_null(doc);
    const char *start = strstr(doc, "```ini\n");
    assert_non_null(start);
    start += strlen("```ini\n");
    const char *end = strstr(start, "```");
    assert_non_null(end);
    char *text = strndup(start, (size_t)(end - start));
    config_t c;
    char err[512];
    if (config_parse_string(text, "/etc/ductile/ductile.conf", &c, err, sizeof(err)) != 0)
        fail_msg("the documented example does not parse: %s", err);
    assert_true(c.nnodes > 1);
    config_free(&c);
    free(text);
    free(doc);
}

/* A running controller takes the keys that may change at run time and lists the
 * others; nothing changes when the file did not. */
static void apply_changes(void **state)
{
    (void)state;
    const char *base = "Nodes = n[1-3],c1\nCheckpointNodes = c1\nOperators = alice\n"
                       "ResizeTimeout = 60\nPolicy = easy\n";
    config_t cur = parse_ok(base), fresh = parse_ok(base);
    config_changes_t ch;
    config_apply_changes(&cur, &fresh, &ch);
    assert_int_equal(ch.napplied + ch.nrestart, 0);
    assert_string_equal(ch.applied, "");
    config_free(&fresh);
    fresh = parse_ok("Nodes = n[1-4],c1\nCheckpointNodes = c1\nOperators = bob,carol\n"
                     "ResizeTimeout = 5\nPolicy = conservative\nCheckpointPlacement = power\n"
                     "CheckpointCandidates = 1\nCheckpointLending = idle\n");
    config_apply_changes(&cur, &fresh, &ch);
    assert_string_equal(ch.applied, "Policy, ResizeTimeout, Operators, CheckpointLending, "
                                    "CheckpointPlacement, CheckpointCandidates");
    assert_int_equal(ch.napplied, 6);
    assert_string_equal(ch.restart, "Nodes"); /* the node c1 is as it was */
    assert_int_equal(ch.nrestart, 1);
    config_t withp = parse_ok("Nodes = n[1-3],c1\nCheckpointNodes = c1\nOperators = alice\n"
                              "ResizeTimeout = 60\nPolicy = easy\nPartition = a Nodes=n1\n");
    config_changes_t pch;
    config_t base2 = parse_ok(base);
    config_apply_changes(&base2, &withp, &pch);
    assert_string_equal(pch.restart, "Partition"); /* a new partition waits for a restart */
    config_free(&withp);
    config_free(&base2);
    /* applied: the new values; the rest as they were */
    assert_true(cur.resize_timeout == 5);
    assert_true(config_is_operator(&cur, "bob") && config_is_operator(&cur, "carol"));
    assert_false(config_is_operator(&cur, "alice"));
    assert_int_equal(cur.ckpt_select, CONFIG_CKPT_SEL_POWER);
    assert_int_equal(cur.ckpt_candidates, 1);
    assert_int_equal(cur.ckpt_lending, 1);
    assert_int_equal(cur.nnodes, 4);
    assert_string_equal(cur.policy, "conservative");
    assert_string_equal(fresh.policy, "easy"); /* swapped: freed with fresh */
    assert_int_equal(config_node_index(&cur, "n4"), -1);
    config_free(&fresh); /* holds alice's list now */
    config_free(&cur);
}

/* NodeFeatures, NodeGres, NodeMemory: HOSTS=VALUE entries; defaults for the others. */
static void node_attributes(void **state)
{
    (void)state;
    config_t c = parse_ok("Nodes = n[1-2], gpu[1-3]\nMemoryPerNode = 1000\n"
                          "NodeFeatures = gpu[1-3]=gpu,a100 n1=ib; n2=ib,big\n"
                          "NodeGres = gpu[1-2]=gpu:4 gpu3=gpu:2\n"
                          "NodeMemory = gpu[1-3]=512G\n");
    int g1 = config_node_index(&c, "gpu1"), g3 = config_node_index(&c, "gpu3");
    int n1 = config_node_index(&c, "n1"), n2 = config_node_index(&c, "n2");
    assert_string_equal(c.node_features[g1], "gpu,a100");
    assert_string_equal(c.node_features[n2], "ib,big");
    assert_int_equal(c.node_gpus[g1], 4);
    assert_int_equal(c.node_gpus[g3], 2);
    assert_int_equal(c.node_gpus[n1], 0);
    assert_int_equal(c.node_memory[g3], 524288);
    assert_int_equal(c.node_memory[n1], 1000); /* MemoryPerNode */
    config_free(&c);
    c = parse_ok("Nodes = n[1-2]\n"); /* none given: no features, no GPUs */
    assert_null(c.node_features[0]);
    assert_int_equal(c.node_gpus[1], 0);
    assert_int_equal(c.node_memory[1], 1024);
    config_free(&c);
    parse_err("Nodes = n[1-2]\nNodeFeatures = n3=gpu\n", "t.conf:2:", "NodeFeatures",
              "n3 is not one of Nodes");
    parse_err("Nodes = n[1-2]\nNodeFeatures = n[1-2]=gpu n1=ib\n", "n1 is given twice", NULL,
              NULL);
    parse_err("Nodes = n[1-2]\nNodeFeatures = n1=gpu&a100\n", "NodeFeatures", "not a list",
              NULL);
    parse_err("Nodes = n[1-2]\nNodeFeatures = n1=gpu, a100\n", "'gpu,' is not a list",
              NULL, NULL);
    parse_err("Nodes = n[1-2]\nNodeGres = n1=mps:100\n", "NodeGres", "gpu:COUNT", NULL);
    parse_err("Nodes = n[1-2]\nNodeMemory = n1=lots\n", "NodeMemory", "amount of memory",
              NULL);
    /* a change is for a restart */
    config_t cur = parse_ok("Nodes = n[1-2]\nNodeGres = n1=gpu:2\n");
    config_t fresh = parse_ok("Nodes = n[1-2]\nNodeGres = n1=gpu:4\n");
    config_changes_t ch;
    config_apply_changes(&cur, &fresh, &ch);
    assert_string_equal(ch.restart, "NodeGres");
    config_free(&cur);
    config_free(&fresh);
}

/* PrivateData (Slurm's): a comma-separated list of what is hidden from users who are not
 * operators; nothing by default; any case and blanks; a word it does not know refused
 * in the user's words; it changes at run time. */
static void private_data(void **state)
{
    (void)state;
    config_t c = parse_ok("Nodes = n1\n");
    assert_int_equal(c.private_data, 0);
    config_free(&c);
    c = parse_ok("Nodes = n1\nPrivateData = jobs,usage,accounts\n");
    assert_int_equal(c.private_data,
                     CONFIG_PRIVATE_JOBS | CONFIG_PRIVATE_USAGE | CONFIG_PRIVATE_ACCOUNTS);
    config_free(&c);
    c = parse_ok("Nodes = n1\nPrivateData = Usage , JOBS,jobs\n");
    assert_int_equal(c.private_data, CONFIG_PRIVATE_JOBS | CONFIG_PRIVATE_USAGE);
    config_free(&c);
    c = parse_ok("Nodes = n1\nPrivateData = \"\"\n"); /* written out: nothing private */
    assert_int_equal(c.private_data, 0);
    config_free(&c);
    parse_err("Nodes = n1\nPrivateData = jobs,foo\n", "t.conf:2: ",
              "PrivateData: 'foo' is not one of jobs, usage, accounts", NULL);
    parse_err("Nodes = n1\nPrivateData = jobs,,usage\n", "PrivateData: '' is not one of", NULL,
              NULL);
    /* Slurm's other words are named as such: a copied slurm.conf line says why */
    parse_err("Nodes = n1\nPrivateData = jobs,reservations\n",
              "PrivateData: 'reservations' is not one of jobs, usage, accounts",
              "(Slurm hides reservations with it; Ductile does not)", NULL);
    config_t cur = parse_ok("Nodes = n1\n");
    config_t fresh = parse_ok("Nodes = n1\nPrivateData = jobs\n");
    config_changes_t ch;
    config_apply_changes(&cur, &fresh, &ch);
    assert_string_equal(ch.applied, "PrivateData");
    assert_int_equal(ch.nrestart, 0);
    assert_int_equal(cur.private_data, CONFIG_PRIVATE_JOBS);
    config_free(&cur);
    config_free(&fresh);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults),
        cmocka_unit_test(every_key),
        cmocka_unit_test(syntax),
        cmocka_unit_test(derived_defaults),
        cmocka_unit_test(errors_name_line),
        cmocka_unit_test(range_errors),
        cmocka_unit_test(cross_key_errors),
        cmocka_unit_test(socket_path_limit),
        cmocka_unit_test(relative_paths),
        cmocka_unit_test(load_errors),
        cmocka_unit_test(node_lookup),
        cmocka_unit_test(checkpoint_nodes),
        cmocka_unit_test(partitions),
        cmocka_unit_test(checkpoint_transfer),
        cmocka_unit_test(doc_example),
        cmocka_unit_test(apply_changes),
        cmocka_unit_test(node_attributes),
        cmocka_unit_test(private_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
