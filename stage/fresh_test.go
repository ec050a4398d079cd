package stage

import (
	"reflect"
	"testing"

	"github.com/dualcrf/dualcrf/train"
)

// TestFreshCopiesEverySetting: the method Train runs is a new value with
// every exported setting of the one it was given — a field added to a
// method and forgotten in fresh fails here — except SDCA's Sampler, Duals
// and Warm, which Train makes from TrainOptions.Sampler, Duals and
// WarmStart.
func TestFreshCopiesEverySetting(t *testing.T) {
	madeByTrain := map[string]bool{"SDCA.Sampler": true, "SDCA.Duals": true, "SDCA.Warm": true}
	for _, m := range []train.Method{&train.SDCA{}, &train.LBFGS{}, &train.OEG{}, &train.SAG{}} {
		v := reflect.ValueOf(m).Elem()
		name := v.Type().Name()
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || madeByTrain[name+"."+f.Name] {
				continue
			}
			switch f.Type.Kind() {
			case reflect.Float64:
				v.Field(i).SetFloat(0.25 + float64(i))
			case reflect.Int, reflect.Int64:
				v.Field(i).SetInt(int64(3 + i))
			case reflect.Uint64, reflect.Uint32:
				v.Field(i).SetUint(uint64(7 + i))
			case reflect.String:
				v.Field(i).SetString("setting")
			case reflect.Bool:
				v.Field(i).SetBool(true)
			default:
				t.Fatalf("%s.%s: a setting of kind %s: teach this test to set it", name, f.Name, f.Type.Kind())
			}
		}
		got := reflect.ValueOf(fresh(m)).Elem()
		if got.Addr().Interface() == m {
			t.Errorf("%s: fresh returned the value given, not a new one", name)
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.IsExported() && !madeByTrain[name+"."+f.Name] && !reflect.DeepEqual(got.Field(i).Interface(), v.Field(i).Interface()) {
				t.Errorf("%s.%s: fresh gives %v, the method had %v", name, f.Name, got.Field(i).Interface(), v.Field(i).Interface())
			}
		}
	}
}
