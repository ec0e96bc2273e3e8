"""replay: `rescon replay`, a user's own Tekton YAML run against the scheduler under test and judged (docs/replay.md).

The pure part reads and plans; the rest talks to a cluster:

    loading        files and folders -> YAML documents, each with where it came from
    classify       documents -> Tasks, Pipelines, PipelineRuns and the objects their workspaces name
    defaulting     a Pipeline no run names -> a PipelineRun with its default params
    references     which Task or Pipeline a taskRef / pipelineRef names, and the form it takes here
    steps          a Task's steps rewritten to the simulation vocabulary, requests kept to the letter
    caveats        what a run does that a simulation cannot (a result read later, a `when` on a result, ...)
    plan           all of that, per run: the objects to apply and the notes to print
    names          the names of `--copies` and `--repeat` instances
    nodes          `--nodes FILE` (kubectl get nodes -o yaml) and `--pool 4x4cpu8Gi` -> node specs
    placement      which nodes a run's pods may use, and a pod that fits none
    judging        an ended run, its pods and its record -> a verdict
    attribution    the contract monitor's violations -> the runs they concern
    output, junit, report   the per-run line, JUnit XML, the ConformanceReport
    cluster_nodes, routing, follow, session, cli   the cluster's side

Everything a user can get wrong is found before any cluster is touched, and
named in one line with its fix (bad_input; exit code 2).
"""
