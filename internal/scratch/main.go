package main
import ("fmt";"os";"cuelang.org/go/cue";"cuelang.org/go/cue/cuecontext";"cuelang.org/go/cue/load";"cuelang.org/go/cue/errors")
func main(){
 insts:=load.Instances([]string{"./harnesses"}, &load.Config{Dir: os.Args[1]})
 ctx:=cuecontext.New()
 v:=ctx.BuildInstance(insts[0])
 if err:=v.Validate(cue.Concrete(true)); err!=nil { fmt.Println(errors.Details(err,nil)); os.Exit(1)}
 fmt.Println(v.LookupPath(cue.ParsePath(`harnesses."claude-code".events[0].render.deny`)))
}
